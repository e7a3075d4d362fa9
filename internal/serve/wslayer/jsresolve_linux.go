package wslayer

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// A JS program loads more than its relative specifiers name (attack round atk38b, F5): node
// resolves `#lib` through the "imports" of the file's package scope (the nearest package.json
// up), a package's own name (`srv/util` inside package "srv") through its "exports", and a
// require whose argument is computed (`require(path.join(__dirname, 'pj.js'))`) names a file
// only when it runs. None was followed, and the package.json mapping them was the call's to
// rewrite. Now each specifier is resolved as node does, the package.json that maps it (and one a
// call could put nearer) is protected, and one the follower cannot resolve protects the
// program's whole package (fail closed), or, when that package is the workspace's root, leaves
// every change not judged (runCut).

// jsRef is what a JS file loads: spec when a plain string literal, else the computed
// argument's text (arg, clipped) with computed set; runs when a file run as a program (fork,
// new Worker: a literal is from the working directory); mention a loader the scan does not
// resolve (why), the program's package whole.
type jsRef struct {
	spec, arg string
	computed  bool
	runs      bool
	mention   string
}

// jsArgMax bounds the text of a computed argument looked at.
const jsArgMax = 512

func skipSpace(text string, i int) int {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r') {
		i++
	}
	return i
}

func isWord(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// jsLiteral reads the string literal at text[i] (quoted, or a backtick with no ${…}) on one
// line, no escapes: ok false when it is not one.
func jsLiteral(text string, i int) (s string, end int, ok bool) {
	q := text[i]
	if q != '\'' && q != '"' && q != '`' {
		return "", i, false
	}
	for j := i + 1; j < len(text) && j-i < 4096; j++ {
		switch c := text[j]; {
		case c == q:
			return text[i+1 : j], j + 1, true
		case c == '\n' || c == '\\' || q == '`' && c == '$' && j+1 < len(text) && text[j+1] == '{':
			return "", i, false
		}
	}
	return "", i, false
}

// jsArg is the text of a call's argument from text[i] to its closing parenthesis, "" when that
// is not within jsArgMax bytes.
func jsArg(text string, i int) string {
	depth := 0
	var quote byte
	for j := i; j < len(text) && j-i < jsArgMax; j++ {
		c := text[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			if depth == 0 {
				return strings.TrimSpace(text[i:j])
			}
			depth--
		}
	}
	return ""
}

var (
	// jsDirJoin is path.join(__dirname, 'a', 'b') (path.resolve, join alone, require('path').join
	// or another name for path), jsDirPlus
	// __dirname + '/a': what a CommonJS program computes most, resolved exactly
	jsDirJoin = lazy.Regexp(`^(?:[\w$]+\.|require\(\s*['"](?:node:)?path['"]\s*\)\.)?(?:join|resolve)\(\s*(?:__dirname|import\.meta\.dirname)\s*((?:,\s*(?:'[^'\\\n]*'|"[^"\\\n]*")\s*)+)\)$`)
	jsDirPlus = lazy.Regexp(`^(?:__dirname|import\.meta\.dirname)\s*\+\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)")$`)
	// new URL('./w.js', import.meta.url): exactly a file beside the program
	jsURLRel = lazy.Regexp(`^new\s+URL\(\s*(?:'(\.{1,2}/[^'\\\n]*)'|"(\.{1,2}/[^"\\\n]*)")\s*,\s*import\.meta\.url\s*\)$`)
	// the literal start of a computed name: path.join(__dirname, '..', 'plugins', name) and
	// __dirname + '/plugins/' + name (or a template's): what it names lies below that start
	jsDirJoinStart = lazy.Regexp(`^(?:[\w$]+\.|require\(\s*['"](?:node:)?path['"]\s*\)\.)?(?:join|resolve)\(\s*(?:__dirname|import\.meta\.dirname)\s*((?:,\s*(?:'[^'\\\n]*'|"[^"\\\n]*")\s*)*),`)
	jsDirPlusStart = lazy.Regexp(`^(?:(?:__dirname|import\.meta\.dirname)\s*\+\s*(?:'([^'\\\n]*)'|"([^"\\\n]*)")\s*\+|` + "`" + `\$\{(?:__dirname|import\.meta\.dirname)\}([^` + "`" + `$\\]*)\$\{)`)
	jsStrs         = lazy.Regexp(`'([^'\\\n]*)'|"([^"\\\n]*)"`)
	jsName         = lazy.Regexp(`^((?:@[\w.-]+/)?\w[\w.-]*)(/.*)?$`)
)

// jsScope is a package scope: the directory of the nearest package.json and what it maps.
type jsScope struct {
	dir, name, main  string
	nearer           []string                   // the package.json a call could make nearer
	imports, exports map[string]json.RawMessage // nil when absent
	bad              bool                       // cut, or not JSON: what it maps is not understood
	impIdx, expIdx   *jsPatterns                // their `*` keys, indexed when first matched
}

// scope finds the package scope of a file in dir and protects its package.json (its "imports",
// "exports", "name", "main" and "type" steer what the file loads): an empty scope when there is
// none up to the workspace's root (or a node_modules, where node's search stops).
func (f *follower) scope(by, dir string) *jsScope {
	if s, ok := f.scopes[dir]; ok {
		return s
	}
	s := &jsScope{}
	for d := dir; d == f.g.ws || strings.HasPrefix(d, f.g.ws+"/"); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			break
		}
		p := filepath.Join(d, "package.json")
		if !regular(p) {
			s.nearer = append(s.nearer, p)
			if d == f.g.ws {
				break
			}
			continue
		}
		if !mutated("workspace-follow-package-scope") {
			f.add(p, by)
		}
		s.dir = d
		b, cut, err := readSmall(p, maxProgramFile)
		f.reads++
		f.bytes += len(b)
		var pj struct {
			Name, Main       any
			Imports, Exports json.RawMessage
		}
		if err != nil || cut || json.Unmarshal(b, &pj) != nil {
			s.bad = true
			break
		}
		s.name, _ = pj.Name.(string)
		s.main, _ = pj.Main.(string)
		if len(pj.Imports) > 0 && json.Unmarshal(pj.Imports, &s.imports) != nil {
			s.imports = nil // not an object: maps nothing
		}
		if len(pj.Exports) > 0 && string(pj.Exports) != "null" {
			// a string, an array or an object of conditions is the package's "."
			var m map[string]json.RawMessage
			sugar := json.Unmarshal(pj.Exports, &m) != nil
			for k := range m {
				sugar = sugar || !strings.HasPrefix(k, ".")
			}
			if sugar {
				m = map[string]json.RawMessage{".": pj.Exports}
			}
			s.exports = m
		}
		break
	}
	if f.scopes == nil {
		f.scopes = map[string]*jsScope{}
	}
	f.scopes[dir] = s
	return s
}

// protectNearer protects the package.json a call could make between a file and its scope: for a
// file that names a `#` or a package, that one would be the scope, mapping the names (node
// resolves a package's own name before node_modules) to the call's files.
func (f *follower) protectNearer(by string, s *jsScope) {
	if mutated("workspace-follow-package-scope") {
		return
	}
	for _, p := range s.nearer {
		f.add(p, by)
	}
	s.nearer = nil
}

// nodeBuiltin are node's modules (node 20's builtinModules): resolved before any file.
var nodeBuiltin = map[string]bool{}

func init() {
	for _, m := range strings.Fields("assert async_hooks buffer child_process cluster console constants crypto dgram diagnostics_channel " +
		"dns domain events fs http http2 https inspector module net os path perf_hooks process punycode querystring readline repl " +
		"stream string_decoder sys timers tls trace_events tty url util v8 vm wasi worker_threads zlib") {
		nodeBuiltin[m] = true
	}
}

// jsResolve protects what a JS file in dir loads by ref, as node resolves it.
func (f *follower) jsResolve(t todoFile, dir string, ref jsRef) {
	spec := ref.spec
	switch {
	case ref.mention != "":
		f.wholePackage(t, dir, f.scope(t.by, dir), ref.mention)
		return
	case spec == "vm" || spec == "node:vm" || spec == "module" || spec == "node:module":
		if !mutated("workspace-follow-loader-mention") {
			// what runs code from a string, or makes another require: not followed
			f.wholePackage(t, dir, f.scope(t.by, dir), "require("+strconv.Quote(spec)+"), a loader the check does not resolve")
		}
		return
	case ref.runs && !ref.computed:
		// fork('./w.js'), new Worker('w.js'): a path from the working directory, the
		// program's own or the workspace's root (where a client starts it)
		if !strings.Contains(spec, ":") {
			for _, b := range []string{dir, f.g.ws} {
				f.jsFile(t, absFrom(b, spec), true)
			}
		} else if !strings.HasPrefix(spec, "node:") {
			f.cutRun(t, "fork or new Worker of "+strconv.Quote(spec)+", a URL the check does not resolve")
		}
		return
	}
	if rel := strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../"); !rel {
		// each a look-up in a package.json or each node_modules up: bounded as the paths
		// are, once from a directory (a bundle names a package many times)
		key := dir + "\x00" + spec + "\x00" + ref.arg
		if f.named[key] {
			return
		}
		if len(f.named) >= maxRun {
			if f.g.runCut == "" && !mutated("workspace-runs-cut-open") {
				f.g.runCut = fmt.Sprintf("programs that name more than %d packages, subpath imports or computed modules", maxRun)
			}
			return
		}
		if f.named == nil {
			f.named = map[string]bool{}
		}
		f.named[key] = true
	}
	switch {
	case ref.computed:
		if !mutated("workspace-follow-computed-open") {
			f.computed(t, dir, ref.arg)
		}
	case strings.HasPrefix(spec, "file:") && !mutated("workspace-follow-js-file-url"):
		f.jsFileURL(t, spec)
	case spec == "." || spec == ".." || strings.HasPrefix(spec, "./") || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/"):
		f.jsFile(t, absFrom(dir, dirSpec(spec)), true)
	case strings.HasPrefix(spec, "#"):
		if mutated("workspace-follow-subpath-imports") {
			return
		}
		s := f.scope(t.by, dir)
		f.protectNearer(t.by, s)
		if s.dir == "" || s.bad || !f.mapped(t, s, s.imports, spec, true) {
			f.wholePackage(t, dir, s, "require("+strconv.Quote(spec)+"), a subpath import its package.json does not map to a file")
		}
	default:
		m := jsName().FindStringSubmatch(spec)
		if m != nil && nodeBuiltin[m[1]] {
			return
		}
		if !strings.Contains(spec, ":") && !mutated("workspace-follow-ts-paths") && f.tsAliased(t, dir, spec) {
			// a TypeScript file runs under tsx, ts-node or bun, which take the aliases, and so
			// does any JS file once such a runner is named; node alone runs JS without them
			return
		}
		if m == nil {
			if !strings.HasPrefix(spec, "node:") && !strings.Contains(spec, ":") && !strings.ContainsAny(spec, " \t") &&
				!mutated("workspace-follow-ts-paths") {
				// "@/lib/x", "~/x": an alias a bundler or a loader resolves, not the check
				f.wholePackage(t, dir, f.scope(t.by, dir), "require("+strconv.Quote(spec)+"), an alias the check does not resolve")
			}
			return // node:fs, a URL: not the workspace's
		}
		s := f.scope(t.by, dir)
		f.protectNearer(t.by, s)
		if s.dir != "" && !mutated("workspace-follow-self-reference") {
			switch {
			case s.bad:
				// its "name" and "exports" not understood: any bare name may be its own
				f.wholePackage(t, dir, s, "require("+strconv.Quote(spec)+") beside a package.json the check does not understand")
			case s.name == m[1] && s.exports != nil:
				// the package's own name: node resolves it through its "exports"
				if !f.mapped(t, s, s.exports, "."+m[2], false) {
					f.wholePackage(t, dir, s, "require("+strconv.Quote(spec)+"), a self-reference its package.json's \"exports\" do not map to a file")
				}
				return
			}
		}
		if !mutated("workspace-follow-bare-links") {
			f.linkedEntry(t, f.linkedPackage(t.by, dir, m[1]), m[2])
		}
	}
}

// linkedEntry reads the file a specifier names in a workspace package linked in node_modules
// (pkg, protected whole): through its "exports", else its path, "main" or index; what that
// loads outside the package (a pnpm workspace's ../../shared/x.js) is then followed.
func (f *follower) linkedEntry(t todoFile, pkg, sub string) {
	if pkg == "" || mutated("workspace-follow-linked-entry") {
		return
	}
	switch s := f.scope(t.by, pkg); {
	case s.dir == pkg && s.exports != nil:
		f.mapped(t, s, s.exports, "."+sub, false)
	case sub != "":
		f.jsFile(t, pkg+sub, true)
	case s.dir == pkg && s.main != "":
		f.jsFile(t, absFrom(pkg, s.main), true)
	default:
		f.jsFile(t, filepath.Join(pkg, "index"), true)
	}
}

// jsFile protects p, what a program loads (with node's extensions when exts), and reads it.
func (f *follower) jsFile(t todoFile, p string, exts bool) {
	es := jsExts[:1]
	if exts {
		es = jsExts
	}
	for _, e := range es {
		if f.add(p+e, t.by) {
			f.todo = append(f.todo, todoFile{p + e, t.by, t.depth + 1})
		}
	}
}

// mapped resolves key through an "imports" or "exports" map of s as node does (exact keys, then
// the `*` pattern with the longest prefix) and protects every target (each condition's and
// fallback's: the runtime's conditions are not known here; a pattern's target directory whole):
// false when nothing maps it or a target is not understood.
func (f *follower) mapped(t todoFile, s *jsScope, m map[string]json.RawMessage, key string, imports bool) bool {
	target, star := m[key], false
	if target == nil {
		if mutated("workspace-follow-map-index") {
			// every key scanned for each name (atk39b F5: keys × names, 19 s a commit)
			best := ""
			for k, v := range m {
				f.mapWork++
				pre, suf, ok := strings.Cut(k, "*")
				if ok && len(pre) > len(best) && strings.HasPrefix(key, pre) && strings.HasSuffix(key[len(pre):], suf) {
					best, target, star = pre, v, true
				}
			}
		} else {
			target = f.patterns(s, m, imports).match(key, &f.mapWork)
			star = target != nil
		}
		if f.mapWork > maxMapWork {
			if f.g.runCut == "" && !mutated("workspace-runs-cut-open") {
				f.g.runCut = fmt.Sprintf("package.json \"imports\"/\"exports\" maps whose matching passes %d steps", maxMapWork)
			}
			return true // not judged past the bound: nothing is applied
		}
	}
	var leaves []string
	if target == nil || !jsLeaves(target, &leaves) || len(leaves) == 0 {
		return false
	}
	for _, l := range leaves {
		switch {
		case strings.HasPrefix(l, "./"):
			p := filepath.Join(s.dir, l)
			if p != s.dir && !strings.HasPrefix(p, s.dir+"/") {
				return false // node refuses a target out of its package
			}
			if pre, _, ok := strings.Cut(l, "*"); ok && star {
				if d := filepath.Join(s.dir, filepath.Dir(pre)); strings.HasPrefix(d, s.dir+"/") {
					f.add(d, t.by) // what the pattern matches: its directory, whole
					continue
				}
				return false
			}
			f.jsFile(t, p, false)
		case imports && !strings.HasPrefix(l, "/") && !strings.HasPrefix(l, "../"):
			if n := jsName().FindStringSubmatch(l); n != nil && !mutated("workspace-follow-bare-links") {
				f.linkedEntry(t, f.linkedPackage(t.by, s.dir, n[1]), n[2]) // "#dep": "some-package"
			}
		default:
			return false
		}
	}
	return true
}

// maxMapWork bounds the steps of matching names against the `*` keys of package.json maps in
// one commit (a look-up by a prefix, a key compared): past it, every change not already judged
// is refused (atk39b F5: the work was keys × names, 25,000 keys × 32,000 names 19 s a commit).
var maxMapWork = 1 << 24 // a variable for the tests

// jsPatterns is a map's `*` keys by their prefix (those of one prefix longest first), and
// the prefixes' lengths, longest first: a name is matched with a look-up per length, not a
// scan of every key (atk39b F5).
type jsPatterns struct {
	lens []int
	by   map[string][]string
	m    map[string]json.RawMessage
}

// patterns indexes m (s's "imports" or "exports") once per scope.
func (f *follower) patterns(s *jsScope, m map[string]json.RawMessage, imports bool) *jsPatterns {
	p := &s.expIdx
	if imports {
		p = &s.impIdx
	}
	if *p != nil && (*p).m != nil {
		return *p
	}
	x := &jsPatterns{by: map[string][]string{}, m: m}
	lens := map[int]bool{}
	for k := range m {
		f.mapWork++
		// node takes a key with one "*" (its last is its first)
		if pre, suf, ok := strings.Cut(k, "*"); ok && !strings.Contains(suf, "*") {
			if !lens[len(pre)] {
				lens[len(pre)] = true
				x.lens = append(x.lens, len(pre))
			}
			x.by[pre] = append(x.by[pre], k)
		}
	}
	slices.Sort(x.lens)
	slices.Reverse(x.lens)
	for _, ks := range x.by {
		// node's order for one prefix: the longer key first
		slices.SortFunc(ks, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	}
	*p = x
	return x
}

// match is the target of the key matching name with the longest prefix (node's
// PATTERN_KEY_COMPARE), nil when none; each step counted in work.
func (x *jsPatterns) match(name string, work *int) json.RawMessage {
	for _, n := range x.lens {
		if n > len(name) {
			continue
		}
		*work += 1 + n/64
		for _, k := range x.by[name[:n]] {
			*work++
			if len(name) >= len(k) && strings.HasSuffix(name, k[n+1:]) {
				return x.m[k]
			}
		}
	}
	return nil
}

// jsLeaves collects the strings of a target: a string, an array of fallbacks, an object of
// conditions (nested), null (no target). false when a part is not understood.
func jsLeaves(raw json.RawMessage, out *[]string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(v any, depth int) bool
	walk = func(v any, depth int) bool {
		switch v := v.(type) {
		case nil:
			return true
		case string:
			*out = append(*out, v)
			return true
		case []any:
			for _, e := range v {
				if !walk(e, depth+1) {
					return false
				}
			}
			return true
		case map[string]any:
			for _, e := range v {
				if depth > 16 || !walk(e, depth+1) {
					return false
				}
			}
			return true
		}
		return false
	}
	return walk(v, 0)
}

// computed protects what a require or import of a computed argument may load: the file a
// path.join(__dirname, '…'), __dirname + '…' or new URL('./…', import.meta.url) names; the
// directory below a literal start (path.join(__dirname, '..', 'plugins', name)) whole; a name
// that may lead out of the package (atk39b F3: any other "..", the working directory, the
// environment, an absolute path, a URL) leaves every change not judged (runCut); anything else
// (a variable, a template with ${…}, a concatenation) the program's package whole.
func (f *follower) computed(t todoFile, dir, arg string) {
	if m := jsDirJoin().FindStringSubmatch(arg); m != nil {
		parts := []string{dir}
		for _, s := range jsStrs().FindAllStringSubmatch(m[1], -1) {
			parts = append(parts, s[1]+s[2])
		}
		f.jsFile(t, filepath.Join(parts...), true)
		return
	}
	if m := jsDirPlus().FindStringSubmatch(arg); m != nil {
		f.jsFile(t, filepath.Clean(dir+"/"+m[1]+m[2]), true)
		return
	}
	if m := jsURLRel().FindStringSubmatch(arg); m != nil {
		f.jsFile(t, absFrom(dir, m[1]+m[2]), true)
		return
	}
	why := arg
	if len(why) > 80 {
		why = why[:80] + "…"
	}
	why = "require(" + why + ")"
	if !mutated("workspace-follow-computed-outside") {
		start, rest := "", arg
		if m := jsDirJoinStart().FindStringSubmatch(arg); m != nil {
			parts := []string{dir}
			for _, s := range jsStrs().FindAllStringSubmatch(m[1], -1) {
				parts = append(parts, s[1]+s[2])
			}
			start, rest = filepath.Join(parts...), arg[len(m[0]):]
		} else if m := jsDirPlusStart().FindStringSubmatch(arg); m != nil {
			// the literal's directory: '/plugins/p-' + name lies in plugins
			start, rest = filepath.Dir(filepath.Clean(dir+"/"+m[1]+m[2]+m[3]+"x")), arg[len(m[0]):]
		}
		switch {
		case jsOutside(rest) || f.jsBase.outside(rest) || jsUpFromHere(rest):
			f.cutRun(t, why+", a name that may lead out of its package (\"..\", the working directory, the environment, an absolute path or a URL)")
			return
		case start != "" && start != f.g.ws && strings.HasPrefix(start, f.g.ws+"/"):
			f.add(start, t.by) // what it names lies below its start: that directory, whole
			return
		case start != "":
			f.cutRun(t, why+", a module named only when it runs, below "+start)
			return
		}
	}
	f.wholePackage(t, dir, f.scope(t.by, dir), why+", a module named only when it runs")
}

// jsOutside: a computed name's text may lead out of the package (a "..", the working
// directory, the environment, the home or a temporary directory, an absolute path, a URL, a
// path resolved from the working directory).
func jsOutside(arg string) bool {
	for _, w := range []string{"..", "cwd", "process.env", "env.", "homedir", "tmpdir", "URL", "file:", "http", "argv"} {
		if strings.Contains(arg, w) {
			return true
		}
	}
	if strings.Contains(arg, "resolve(") && !strings.Contains(arg, "require.resolve(") {
		return true // path.resolve(name): from the working directory
	}
	a := strings.TrimLeft(arg, "(`'\" \t")
	return strings.HasPrefix(a, "/") || strings.HasPrefix(a, "\\")
}

// cutRun leaves every change not otherwise judged unapplied, naming the program and why.
func (f *follower) cutRun(t todoFile, why string) {
	if f.g.runCut == "" {
		rel, _ := filepath.Rel(f.g.ws, t.path)
		f.g.runCut = fmt.Sprintf("a program (%s) that loads %s", strconv.Quote(filepath.ToSlash(rel)), why)
	}
}

// wholePackage protects the package (else the directory) of a program in dir whole, for what
// it loads that the follower did not resolve; the workspace's root is not protected whole: then
// what is not otherwise judged is not applied (runCut), the reason named.
func (f *follower) wholePackage(t todoFile, dir string, s *jsScope, why string) {
	d := dir
	if s != nil && s.dir != "" {
		d = s.dir
	}
	if d != f.g.ws {
		f.add(d, t.by)
		return
	}
	if f.g.runCut == "" {
		rel, _ := filepath.Rel(f.g.ws, t.path)
		f.g.runCut = fmt.Sprintf("a program (%s, in the workspace's root package) that loads %s", strconv.Quote(filepath.ToSlash(rel)), why)
	}
}

// Python names modules at run time too (atk38b F5's class): importlib.import_module(name),
// __import__(name), runpy.run_module(name) and run_path(path). A literal (or a literal start
// up to its first dot: f"tools.{name}", "tools." + name, which cannot leave the package
// tools) is followed as an import is; anything else protects the file's directory whole (its
// sys.path[0]), or, at the workspace's root, leaves every change not otherwise judged
// unapplied.
var pyDyn = lazy.Regexp(`\b(import_module|__import__|run_module|run_path)\s*\(`)

func (f *follower) pyDynamic(t todoFile, dir, text string) {
	if mutated("workspace-follow-py-dynamic") {
		return
	}
	for _, loc := range pyDyn().FindAllStringSubmatchIndex(text, maxRun) {
		fn := text[loc[2]:loc[3]]
		i := skipSpace(text, loc[1])
		for j := 0; j < 2 && i < len(text) && strings.ContainsRune("rRbBfFuU", rune(text[i])); j++ {
			i++
		}
		fstr := i > 0 && (text[i-1] == 'f' || text[i-1] == 'F')
		s, end, ok := jsLiteral(text, i)
		if ok && fstr {
			if pre, _, cut := strings.Cut(s, "{"); cut {
				s, ok = pre, false
			}
		}
		if ok {
			if e := skipSpace(text, end); e >= len(text) || text[e] != ')' && text[e] != ',' {
				ok = false // "tools." + name, 'tools.%s' % name: the literal is a start
			}
		} else if !fstr {
			s = ""
		}
		s, _, _ = strings.Cut(s, "%")
		switch {
		case fn == "run_path" && ok && s != "":
			for _, b := range []string{dir, f.g.ws} {
				f.jsFile(t, absFrom(b, s), false)
			}
			continue
		case fn != "run_path" && s != "" && !strings.HasPrefix(s, ".") && (ok || strings.Contains(s, ".")):
			top, _, _ := strings.Cut(s, ".")
			if pyIdent().MatchString(top) {
				for _, b := range []string{dir, f.g.ws} {
					for _, e := range []string{"", ".py"} {
						if p := filepath.Join(b, top+e); f.add(p, t.by) {
							f.todo = append(f.todo, todoFile{p, t.by, t.depth + 1})
						}
					}
				}
				continue
			}
		}
		if dir != f.g.ws {
			f.add(dir, t.by)
		} else if f.g.runCut == "" {
			rel, _ := filepath.Rel(f.g.ws, t.path)
			f.g.runCut = fmt.Sprintf("a program (%s, at the workspace's root) that loads %s(…), a module named only when it runs", strconv.Quote(filepath.ToSlash(rel)), fn)
		}
	}
}

// jsFileURL: import 'file:///…/lib/x.js' runs the file the URL names (atk42 F7: it was looked up
// as a package name, and nothing was protected); a URL the check cannot place fails closed.
func (f *follower) jsFileURL(t todoFile, spec string) {
	u, err := url.Parse(spec)
	if err != nil || u.Path == "" || u.Host != "" && u.Host != "localhost" {
		f.cutRun(t, "import of "+strconv.Quote(spec)+", a file URL the check does not resolve")
		return
	}
	f.jsFile(t, u.Path, true)
}

// dirSpec: "." and ".." name a directory (its index), as "./" and "../" do.
func dirSpec(spec string) string {
	if spec == "." || spec == ".." {
		return spec + "/"
	}
	return spec
}
