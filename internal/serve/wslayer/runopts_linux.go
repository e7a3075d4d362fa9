package wslayer

import "strings"

// The option tables a runtime's command line is read by (atk46a F3): the script it runs is the
// first word its getopt does not take for an option or an option's value, so a table that
// misses a valued option takes the value for the script, and the real script is read as a
// shell script's words. Python's and node's tables are the runtimes' own (python3 --help;
// node v20's internal/options: its string, integer and host:port options take a value); an
// option a newer runtime has that they do not is read both ways (optWords: unknown).

// nodeValued are node's long options (without --, `_` spelled `-`) whose value is the next word.
var nodeValued = wordSet(`allow-fs-read allow-fs-write build-snapshot-config conditions cpu-prof-dir
	cpu-prof-interval cpu-prof-name debug-port diagnostic-dir disable-proto disable-warning dns-result-order
	env-file env-file-if-exists experimental-default-type experimental-loader experimental-policy
	experimental-sea-config heap-prof-dir heap-prof-interval heap-prof-name heapsnapshot-near-heap-limit
	heapsnapshot-signal icu-data-dir import input-type inspect-port inspect-publish-uid loader
	max-http-header-size network-family-autoselection-attempt-timeout openssl-config policy-integrity
	redirect-warnings report-dir report-directory report-filename report-signal require secure-heap
	secure-heap-min security-revert security-reverts snapshot-blob test-concurrency test-name-pattern
	test-reporter test-reporter-destination test-shard test-timeout title tls-cipher-list tls-keylog
	trace-event-categories trace-event-file-pattern trace-require-module unhandled-rejections use-largepages
	v8-pool-size watch-path`)

// nodeFlags are node's long options that take no value (its booleans and the V8 options it
// lists: a V8 option's value is joined by `=`, node refuses `--stack-trace-limit 50`).
var nodeFlags = wordSet(`abort-on-uncaught-exception addons allow-addons allow-child-process allow-wasi
	allow-worker build-snapshot check cpu-prof debug debug-arraybuffer-allocations debug-brk deprecation
	disable-wasm-trap-handler disallow-code-generation-from-strings enable-etw-stack-walking enable-fips
	enable-network-family-autoselection enable-source-maps experimental-abortcontroller
	experimental-detect-module experimental-eventsource experimental-fetch experimental-global-customevent
	experimental-global-webcrypto experimental-import-meta-resolve experimental-json-modules
	experimental-modules experimental-network-imports experimental-network-inspection experimental-permission
	experimental-print-required-tla experimental-repl-await experimental-report experimental-require-module
	experimental-shadow-realm experimental-test-coverage experimental-test-module-mocks
	experimental-top-level-await experimental-vm-modules experimental-wasi-unstable-preview1
	experimental-wasm-modules experimental-websocket experimental-worker expose-gc expose-internals
	extra-info-on-fatal-exception force-async-hooks-checks force-context-aware force-fips
	force-node-api-uncaught-exceptions-policy frozen-intrinsics global-search-paths harmony-shadow-realm
	heap-prof huge-max-old-generation-size insecure-http-parser inspect inspect-brk inspect-brk-node
	inspect-wait interactive interpreted-frames-native-stack jitless max-old-space-size max-semi-space-size
	napi-modules network-family-autoselection node-memory-debug node-snapshot openssl-legacy-provider
	openssl-shared-config pending-deprecation perf-basic-prof perf-basic-prof-only-functions perf-prof
	perf-prof-unwinding-info preserve-symlinks preserve-symlinks-main prof report-compact
	report-exclude-network report-on-fatalerror report-on-signal report-uncaught-exception stack-trace-limit
	test test-force-exit test-only test-udp-no-try-send throw-deprecation tls-max-v1.2 tls-max-v1.3
	tls-min-v1.0 tls-min-v1.1 tls-min-v1.2 tls-min-v1.3 trace-atomics-wait trace-deprecation trace-exit
	trace-promises trace-sigint trace-sync-io trace-tls trace-uncaught trace-warnings track-heap-objects
	use-bundled-ca use-openssl-ca verify-base-objects warnings watch watch-preserve-output zero-fill-buffers`)

// nodeNoScript are node's long options after which it runs no script of the command line's:
// code, help, version, its profile processor.
var nodeNoScript = wordSet(`eval print help version v8-options completion-bash prof-process`)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// isNodeValued: node's option w (as spelled) takes the next word for its value.
func isNodeValued(w string) bool {
	if w == "-r" || w == "-C" {
		return true
	}
	name, ok := strings.CutPrefix(w, "--")
	if !ok {
		return false
	}
	if mutated("workspace-runtime-option-tables") {
		return jsValuedOld[w]
	}
	return nodeValued[strings.ReplaceAll(name, "_", "-")] // node reads --unhandled_rejections as --unhandled-rejections
}

// jsValuedOld is the table before atk46a F3 (the mutant's).
var jsValuedOld = map[string]bool{"-r": true, "--require": true, "--import": true, "--loader": true, "--experimental-loader": true,
	"-C": true, "--conditions": true, "--input-type": true, "--env-file": true, "--title": true}

// optWords reads the option word w of lang's runtime: how many next words are its values; stop
// when the runtime runs no script after it (code, a module, help); known false when the table
// does not know it (a newer runtime's option, which may or may not take the next word).
func optWords(lang, w string) (values int, stop, known bool) {
	switch lang {
	case "py":
		return pyOptWords(w)
	case "js":
		return nodeOptWords(w)
	case "sh":
		return shOptWords(w)
	}
	return 0, false, true
}

// pyOptWords reads a python3 option word: a cluster (-uW ignore, -BX dev, -uWignore) is read
// letter by letter as CPython's getopt does, its valued letter taking the rest of the word or,
// when it ends the word, the next.
func pyOptWords(w string) (int, bool, bool) {
	if long, ok := strings.CutPrefix(w, "--"); ok {
		switch {
		case long == "check-hash-based-pycs":
			return 1, false, true
		case long == "help" || long == "version" || strings.HasPrefix(long, "help-"):
			return 0, true, true
		}
		return 0, false, false
	}
	for j := 1; j < len(w); j++ {
		switch c := w[j]; {
		case strings.IndexByte("cmhV?", c) >= 0:
			return 0, true, true // code (-c), a module (-m), help, version
		case c == 'W' || c == 'X':
			if j+1 < len(w) || mutated("workspace-runtime-option-cluster") {
				return 0, false, true // its value joined (-Wignore, -Xutf8)
			}
			return 1, false, true
		case strings.IndexByte("bBdEiIOPqRsSuvx", c) < 0:
			return 0, false, false
		}
	}
	return 0, false, true
}

// nodeOptWords reads a node option word; node clusters no letters (-pe is one option).
func nodeOptWords(w string) (int, bool, bool) {
	if isNodeValued(w) {
		return 1, false, true
	}
	long, ok := strings.CutPrefix(w, "--")
	if !ok {
		return 0, strings.ContainsAny(w, "ephv"), w == "-i" || w == "-c" || strings.ContainsAny(w, "ephv")
	}
	name, _, joined := strings.Cut(strings.ReplaceAll(long, "_", "-"), "=")
	switch {
	case nodeNoScript[name]:
		return 0, true, true
	case joined, nodeFlags[name], nodeFlags[strings.TrimPrefix(name, "no-")]:
		return 0, false, true
	}
	return 0, false, false
}

// shOptWords reads a shell's option word: each o or O of a cluster (-eo pipefail, -oe pipefail,
// -oo errexit nounset) takes one next word, as bash and dash do.
func shOptWords(w string) (int, bool, bool) {
	switch {
	case w == "--rcfile" || w == "--init-file":
		return 1, false, true
	case strings.HasPrefix(w, "--"):
		return 0, false, true
	case strings.Contains(w, "c"):
		return 0, true, true // -c: its code, read by runtimeInline
	case mutated("workspace-runtime-option-cluster"):
		return strings.Count(w[:min(len(w), 2)], "o") + strings.Count(w[:min(len(w), 2)], "O"), false, true
	}
	return strings.Count(w, "o") + strings.Count(w, "O"), false, true
}
