package wslayer

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Inline code is read as each runtime's getopt reads its command line, from the config's
// decoded strings (attack round atk42 F1): only a string that was exactly -c, -e, --eval, -p or
// --print, raw, was read, so `python3 -Bc …`, `-cimport srv.main`, `node -pe …`,
// `--eval=…`, a JSON `\n` or `\u0069`, `import os; import srv.main`, a YAML plain scalar, a
// TOML literal string, and a started shell script's `python3 -c …` or heredoc to `python3 -`
// ran code whose imports were the call's to rewrite.

// inlineProg is a program's text a command line hands a runtime inline: lang "py", "js" or "sh".
type inlineProg struct{ lang, code string }

// pyInline reads w (a word of a command line, args the words after it) as CPython's getopt:
// a cluster of options taking no value ending in c, the code joined (-cCODE, -Bccode) or the
// next word (-c CODE, -Bc CODE). unknown: a cluster holding c that CPython's options do not
// explain (a newer option: not modeled).
func pyInline(w string, args []string) (code string, ok, unknown bool) {
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return "", false, false
	}
	for i := 1; i < len(w); i++ {
		switch c := w[i]; {
		case c == 'c':
			if i+1 < len(w) {
				return w[i+1:], true, false
			}
			if len(args) > 0 {
				return args[0], true, false
			}
			return "", false, false
		case c == 'm' || c == 'W' || c == 'X':
			return "", false, false // its value is the rest: no code
		case strings.IndexByte(pyNoArg, c) < 0:
			return "", false, strings.IndexByte(w[i:], 'c') >= 0
		}
	}
	return "", false, false
}

// jsInline reads w as node's (bun's) options that take the program's text: -e, -p, -pe,
// --eval, --print (the next word) and --eval=CODE, --print=CODE.
func jsInline(w string, args []string) (string, bool) {
	for _, o := range []string{"--eval=", "--print="} {
		if code, ok := strings.CutPrefix(w, o); ok {
			return code, true
		}
	}
	switch w {
	case "-e", "-p", "-pe", "--eval", "--print":
		if len(args) > 0 {
			return args[0], true
		}
	}
	return "", false
}

// inlineOf reads each of words (a config's strings, whose runtime is not known: each is read
// as python's and as node's) for inline code.
func inlineOf(words []string) []inlineProg {
	var out []inlineProg
	for i, w := range words {
		if mutated("workspace-follow-inline-getopt") {
			if inlineOpts[w] && i+1 < len(words) {
				lang := "js"
				if w == "-c" {
					lang = "py"
				}
				out = append(out, inlineProg{lang, words[i+1]})
			}
			continue
		}
		if filepath.Base(w) == "deno" && !mutated("workspace-inline-deno-eval") {
			// a config's strings: "args" may come before "command"; eval's code is the word after it
			if e := slices.Index(words, "eval"); e >= 0 {
				out = append(out, denoEval(words[e:])...)
			}
		}
		if code, ok, _ := pyInline(w, words[i+1:]); ok {
			out = append(out, inlineProg{"py", code})
		} else if code, ok := jsInline(w, words[i+1:]); ok {
			out = append(out, inlineProg{"js", code})
		}
	}
	return append(out, envSplitProgs(words, 0, true)...) // a config's ["-S", "python3\\_-c\\_…"] (atk45a F6)
}

// Runtimes a statement may start, and the words that run the next word as a command.
var (
	pyRuntimes  = map[string]bool{"python": true, "python3": true, "pypy": true, "pypy3": true}
	jsRuntimes  = map[string]bool{"node": true, "nodejs": true, "bun": true}
	shRuntimes  = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}
	cmdWrappers = map[string]bool{"exec": true, "env": true, "nohup": true, "command": true, "time": true, "nice": true, "uv": true,
		"run": true, "uvx": true, "stdbuf": true, "setsid": true}
)

// maxEvalWords bounds the words after `deno eval` read as its code.
const maxEvalWords = 16

// denoEval reads the words after deno as its CLI does for `deno eval [OPTIONS] CODE` (`deno
// eval CODE`, `deno -q eval --ext=ts CODE`): the code is eval's first word that is not an
// option. An option deno takes a value after (--config f, --import-map f, --ext ts) is not
// modeled: every later word that is not an option is read as the code, the wider reading (a
// file name read as JavaScript names nothing). `deno run file` names the file: a word.
func denoEval(args []string) []inlineProg {
	if mutated("workspace-inline-deno-eval") {
		return nil
	}
	i := slices.IndexFunc(args, func(w string) bool { return !strings.HasPrefix(w, "-") })
	if i < 0 || args[i] != "eval" {
		return nil
	}
	var progs []inlineProg
	for _, w := range args[i+1:] {
		if w == "--" || strings.HasPrefix(w, "-") {
			continue
		}
		if progs = append(progs, inlineProg{"js", w}); len(progs) == maxEvalWords {
			break
		}
	}
	return progs
}

// runtimeLang is the language of the runtime w names ("" when none).
func runtimeLang(w string) string {
	b := filepath.Base(w)
	switch {
	case pyRuntimes[b] || strings.HasPrefix(b, "python3.") || strings.HasPrefix(b, "pypy3."):
		return "py"
	case jsRuntimes[b]:
		return "js"
	case shRuntimes[b]:
		return "sh"
	}
	return ""
}

// stmtInline reads one statement of a shell program (words as bash split them) for the code it
// hands a runtime: its -c or -e words, or its standard input when it runs no script (a heredoc
// or here-string: `python3 - <<'EOF'`, whose body is heredocs' by its marker word). unmodeled
// says why the code is not known (an unknown cluster holding c, a program read from a pipe).
func stmtInline(words []string, heredocs map[string]string) (progs []inlineProg, unmodeled string) {
	return stmtInlineAt(words, heredocs, 0)
}

// stmtInlineAt is stmtInline for a statement depth words within words deep (cmdStringsInline).
func stmtInlineAt(words []string, heredocs map[string]string, depth int) (progs []inlineProg, unmodeled string) {
	args, in := stdinOf(words, heredocs)
	if mutated("workspace-inline-first-word") {
		k := 0
		for k < len(args) && (cmdWrappers[filepath.Base(args[k])] || strings.HasPrefix(args[k], "-") || strings.Contains(args[k], "=")) {
			k++
		}
		if k == len(args) {
			return nil, ""
		}
		return runtimeInline(runtimeLang(args[k]), args[k+1:], in, true)
	}
	// every runtime the statement names, after whatever words (timeout 30 python3 -c, poetry run
	// python -c, uv run --with httpx python -c: atk43 F3), not only its command's; each read up
	// to the next runtime word (atk44a F4: each read the rest of the statement, O(words²))
	start := runtimeStarts(args)
	next := len(args)
	ends := make([]int, len(args))
	for k := len(args) - 1; k >= 0; k-- {
		ends[k] = min(next+1, len(args))
		if runtimeLang(args[k]) != "" || filepath.Base(args[k]) == "deno" {
			next = k
		}
	}
	for k := 0; k < len(args); k++ {
		lang := runtimeLang(args[k])
		if filepath.Base(args[k]) == "deno" {
			progs = append(progs, denoEval(args[k+1:])...)
		}
		langs, started := []string{lang}, start(k)
		if lang == "" {
			if !started || !unresolvedCommand(args[k]) {
				continue
			}
			// a command the reader cannot name (`cat boot.txt | "$PY" -`): read as each runtime
			// would; reading a standard input it is not fed is no program of the workspace's
			langs, started = anyRuntime, in.fed
		}
		win := args[k+1 : ends[k]]
		if mutated("workspace-inline-runtime-window") {
			win = args[k+1:]
		}
		for _, l := range langs {
			p, why := runtimeInline(l, win, in, started)
			progs = append(progs, p...)
			if unmodeled == "" {
				unmodeled = why
			}
		}
	}
	return append(progs, cmdStringsInline(args, depth)...), unmodeled
}

// runWrappers are the commands that run their arguments as a command, after their options and
// values; subWrappers do so only under a subcommand (runSubs: uv run, poetry run, pnpm exec; not
// uv python install, conda install python); posWrappers take one word before the command
// (flock FILE, taskset MASK, direnv exec DIR).
var (
	runWrappers = map[string]bool{"exec": true, "env": true, "nohup": true, "command": true, "time": true, "nice": true,
		"uvx": true, "stdbuf": true, "setsid": true, "timeout": true, "sudo": true, "doas": true, "xargs": true, "flock": true,
		"npx": true, "bunx": true, "dotenv": true, "caffeinate": true, "xvfb-run": true, "strace": true, "ltrace": true,
		"taskset": true, "chrt": true, "ionice": true, "chpst": true, "runuser": true, "unbuffer": true, "firejail": true,
		"bwrap": true, "eval": true, "builtin": true, "tini": true, "dumb-init": true, "gosu": true, "su-exec": true,
		"setpriv": true, "prlimit": true, "systemd-run": true, "chronic": true}
	subWrappers = map[string]bool{"uv": true, "poetry": true, "pipenv": true, "pdm": true, "hatch": true, "rye": true,
		"conda": true, "mamba": true, "micromamba": true, "pixi": true, "npm": true, "pnpm": true, "yarn": true,
		"doppler": true, "op": true, "direnv": true, "mise": true, "rtx": true, "asdf": true, "devbox": true}
	runSubs     = map[string]bool{"run": true, "exec": true, "tool": true, "dlx": true, "x": true}
	posWrappers = map[string]bool{"flock": true, "taskset": true, "chrt": true, "direnv": true}
	// wrapperValue is a value a wrapper takes before its command: timeout's 30, 1.5m; nice's 10
	wrapperValue = lazy.Regexp(`^[0-9][0-9.]*[smhd]?$`)
)

// runtimeStarts says which of a statement's words (its redirections taken out) may be a runtime
// it starts: its command (after keywords and assignments), or the command a chain of wrappers
// runs (exec, env X=1, timeout 30, nice -n 10, uv run --with httpx, poetry run; a runtime word
// after an option may be its value: uv run --python python3.12 python, both read). A runtime
// word that is an argument of any other command is data (which node, hash node, command -v
// python3, pgrep -f node, echo … python3, sudo apt-get install python3: atk44a F3): its code
// options are still read (the wider reading), but its having none is no program from a pipe.
func runtimeStarts(args []string) func(int) bool {
	if mutated("workspace-inline-runtime-anywhere") {
		return func(int) bool { return true }
	}
	starts := map[int]bool{}
	k := 0
	for k < len(args) {
		if _, _, ok := assignment(args[k]); !ok && (!shellKeywords[args[k]] || args[k] == "command") {
			break
		}
		k++
	}
	sub, pos, afterOpt := false, false, false
	for i := k; i < len(args); i++ {
		w, b := args[i], filepath.Base(args[i])
		_, _, assign := assignment(w)
		switch {
		case runtimeLang(w) != "" && sub && !afterOpt:
			return func(j int) bool { return starts[j] } // uv python install python3.12: no run
		case runtimeLang(w) != "":
			starts[i] = true
			if !afterOpt {
				return func(j int) bool { return starts[j] }
			}
		case i > k && (strings.HasPrefix(w, "-") || assign || afterOpt || wrapperValue().MatchString(w)):
		case i > k && runSubs[w]:
			sub = false
		case pos:
			pos = false
		case (i == k || !sub) && b == "command" && i+1 < len(args) && strings.HasPrefix(args[i+1], "-") && strings.ContainsAny(args[i+1], "vV"):
			return func(j int) bool { return starts[j] } // command -v X: a query
		case (i == k || !sub) && runWrappers[b]:
			pos = posWrappers[b]
		case (i == k || !sub) && subWrappers[b]:
			sub, pos = true, posWrappers[b]
		case unresolvedCommand(w):
			starts[i] = true // a command the reader cannot name may be a runtime (atk45a F4)
			return func(j int) bool { return starts[j] }
		default:
			return func(j int) bool { return starts[j] } // the command is no wrapper: its runtime words are data
		}
		afterOpt = strings.HasPrefix(w, "-") && !strings.Contains(w, "=") && w != "--"
	}
	return func(j int) bool { return starts[j] }
}

// cmdStringOpt is a wrapper's option cluster or long option whose value is a command line
// (env -S/-iS/--split-string=, flock's, su's, runuser's and script's -c/--command=): its
// value starts after it.
var cmdStringOpt = lazy.Regexp(`^(?:-[A-Za-z0-9]*?[Sc]|--(?:split-string|command)=)`)

// cmdStringsInline reads the words of a statement that hold a command line (a blank), as a
// config's strings are read: what a wrapper hands a shell (env -S "python3 -c …", flock f -c
// "…", su -c "…", script -c "…", watch "…", nodemon --exec "…"). The inline code found is
// taken, the wider reading (an `echo "… python3 -c …"` protects what the code names); what
// such a word leaves unmodeled (`echo "needs python3"`: a runtime with no program) is not a
// program known to run, so it fails nothing closed. depth bounds words within words.
func cmdStringsInline(args []string, depth int) []inlineProg {
	if depth > maxShellNest || mutated("workspace-inline-command-words") {
		return nil
	}
	progs := envSplitProgs(args, depth, false) // env -S 'python3\_-c\_…': split as env does (atk45a F6)
	for _, w := range args {
		if !strings.ContainsAny(w, " \t\n") {
			continue
		}
		w = w[len(cmdStringOpt().FindString(w)):] // env -S"python3 -c …" is one word: the value after the option
		for _, words := range shellStatements(w) {
			p, _ := stmtInlineAt(words, nil, depth+1)
			progs = append(progs, p...)
		}
	}
	return progs
}

// maxLaterOpts bounds the later words of one runtime's command line tried as its code option.
const maxLaterOpts = 64

// runtimeInline reads a runtime's (lang's) arguments for its inline code; in is what its
// standard input is (a heredoc or here-string's text, or a file). An option the reader does not
// know may take the next word, which it then reads as the script: so a code option after the
// script's word (node --disable-warning X -e …, bash -O extglob -c …) is read as code too, the
// wider reading (for a real script it is that script's argument: read as code, it protects
// more), and a script named /dev/stdin is its standard input. start: the runtime is the one the
// statement starts (runtimeStarts); only then is a program the check cannot see unmodeled.
func runtimeInline(lang string, args []string, in stdin, start bool) ([]inlineProg, string) {
	argsOf := func(a []string) (code string, found, std bool, unmodeled string) {
		switch lang {
		case "py":
			return pyArgs(a)
		case "js":
			code, found, std = jsArgs(a)
		case "sh":
			code, found, std = shArgs(a)
		}
		return code, found, std, ""
	}
	if lang == "" {
		return nil, ""
	}
	code, found, std, unmodeled := argsOf(args)
	if !start {
		unmodeled = ""
	}
	switch {
	case found:
		return []inlineProg{{lang, code}}, ""
	case std && in.fed && in.unseen == "":
		return []inlineProg{{lang, in.text}}, ""
	case std && start && in.fed:
		return nil, in.unseen
	case std && start && unmodeled == "":
		return nil, pipeUnseen
	case unmodeled != "":
		return nil, unmodeled
	}
	tries := 0
	for j, w := range args {
		if stdinPath[w] && in.fed {
			if in.unseen != "" && start {
				return nil, in.unseen // bash /dev/stdin < <(…)
			}
			if in.unseen != "" {
				return nil, ""
			}
			return []inlineProg{{lang, in.text}}, "" // bash /dev/stdin <<EOF
		}
		if j == 0 || !strings.HasPrefix(w, "-") || !strings.ContainsAny(w, "cep") {
			continue
		}
		if tries++; tries > maxLaterOpts {
			return nil, "a command line with more options than the check reads"
		}
		if code, found, _, _ := argsOf(args[j:]); found {
			return []inlineProg{{lang, code}}, ""
		}
	}
	return nil, ""
}

// stdinPath are the names of a process's standard input as a file: a script named so is what
// its standard input holds.
var stdinPath = map[string]bool{"/dev/stdin": true, "/dev/fd/0": true, "/proc/self/fd/0": true}

// stdin is what a statement's redirections feed its standard input: a heredoc's or
// here-string's text, or a file (fed); unseen says why the program there is not one the check
// reads (a process substitution, a file it cannot name).
type stdin struct {
	text   string
	fed    bool
	unseen string
}

// stdinOf takes a statement's redirections out of its words: what a heredoc (its marker word),
// a here-string (<<< word) or a file (< f: a word judged as any other) feeds its standard input.
// A `<` whose word is a process substitution (`< <(…)`: the reader ends the statement at its
// parenthesis, so no word or a `<` follows), unresolved (`"$BOOT"`) or a glob (`tools/*.py`) is
// a file the words reader protects nothing of: a program the check cannot see, as a pipe's
// (atk44a F11); a lone `<` is `bash <(…)`'s script.
func stdinOf(words []string, heredocs map[string]string) (args []string, in stdin) {
	for i := 0; i < len(words); i++ {
		w := words[i]
		if w == pipeMark {
			if !in.fed { // a redirection of the statement's own comes after the pipe: it wins
				in = stdin{fed: true, unseen: pipeUnseen}
			}
			continue
		}
		if body, ok := heredocs[w]; ok {
			in = stdin{text: body, fed: true}
			if text, ok := strings.CutPrefix(body, heredocExpand); ok && !mutated("workspace-inline-stdin-text-unseen") {
				// an unquoted delimiter's body bash expands, and the walk did not resolve (atk45a F4)
				in.unseen = "a runtime reading its program from a heredoc whose expansions the check cannot resolve (" +
					strconv.Quote(clip(strings.ReplaceAll(text, unresolvedSub, "$(…)"))) + ")"
			}
			continue
		}
		op, ok := redirection(w)
		if !ok {
			args = append(args, w)
			continue
		}
		val := w[len(op):]
		if val == "" && i+1 < len(words) {
			if _, isOp := redirection(words[i+1]); !isOp || strings.TrimLeft(words[i+1], "<>") != "" {
				i++
				val = words[i]
			}
		}
		fd := op[:len(op)-len(strings.TrimLeft(op, "0123456789"))]
		switch strings.TrimLeft(op, "0123456789") {
		case "<<<":
			in = stdin{text: val, fed: true}
			if expansion(val) && !mutated("workspace-inline-stdin-text-unseen") {
				// `<<< "$(cat boot.txt)"`, `<<< "$CODE"`: text the walk did not resolve (atk45a F4)
				in.unseen = "a runtime reading its program from a here-string the check cannot resolve (" +
					strconv.Quote(clip(strings.ReplaceAll(val, unresolvedSub, "$(…)"))) + ")"
			}
		case "<":
			if fd != "" && fd != "0" {
				continue
			}
			in = stdin{text: stdinFileMark + val, fed: true} // a file: read as the runtime's program (runInline: atk45a F5)
			if (val == "" || strings.HasPrefix(val, "<") || strings.HasPrefix(val, ">") || strings.ContainsAny(val, "$`*?[")) &&
				!mutated("workspace-inline-stdin-unseen") {
				in.unseen = fmt.Sprintf("a runtime reading its program from %s, which the check cannot see", unseenWhat(val))
			}
		}
	}
	return args, in
}

// unseenWhat names, for a refusal, the file a `<` reads that the check cannot see.
func unseenWhat(val string) string {
	if val == "" || strings.HasPrefix(val, "<") || strings.HasPrefix(val, ">") {
		return "a process substitution (<(…))"
	}
	return "a file it cannot name (" + strconv.Quote(strings.ReplaceAll(val, unresolvedSub, "$(…)")) + ")"
}

// pyArgs reads a python command line's arguments as CPython's getopt: the -c code (found), or
// std when the program is standard input (`-`, or no script); unmodeled for a cluster holding c
// its options do not explain (a newer CPython's option).
func pyArgs(args []string) (code string, found, std bool, unmodeled string) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-":
			return "", false, true, ""
		case w == "--" || !strings.HasPrefix(w, "-"):
			return "", false, false, "" // a script: the command line's word
		case w == "--check-hash-based-pycs":
			i++
			continue
		case strings.HasPrefix(w, "--"):
			if w == "--version" || w == "--help" || strings.HasPrefix(w, "--help-") {
				return "", false, false, ""
			}
			continue
		}
		if code, ok, unknown := pyInline(w, args[i+1:]); ok || unknown {
			if unknown {
				unmodeled = fmt.Sprintf("a python option cluster %s the check does not read", strconv.Quote(w))
			}
			return code, ok, false, unmodeled
		}
		for j := 1; j < len(w); j++ {
			switch w[j] {
			case 'm':
				code, found := pyModuleCode(w[j+1:], args[i+1:])
				return code, found, false, ""
			case 'h', 'V':
				return "", false, false, "" // a module (a word), or help and version: no program
			case 'W', 'X':
				if j+1 == len(w) {
					i++ // the value is the next word
				}
				j = len(w)
			}
		}
	}
	return "", false, true, ""
}

// pyModuleCode reads `python3 -m MOD ARGS` (mod joined to -m or "" when it is the next word) for
// a standard-library module that runs its arguments as code: timeit's statements and its -s
// setup (atk44a F9: `python3 -m timeit 'import app.main'` imports app.main). Every word but an
// option is taken (the wider reading: a number is no import). Any other module is a word.
func pyModuleCode(mod string, rest []string) (string, bool) {
	if mod == "" && len(rest) > 0 {
		mod, rest = rest[0], rest[1:]
	}
	if mod != "timeit" || mutated("workspace-py-timeit-code") {
		return "", false
	}
	var code []string
	for _, w := range rest {
		switch {
		case strings.HasPrefix(w, "--setup="):
			code = append(code, w[len("--setup="):])
		case strings.HasPrefix(w, "-s") && len(w) > 2:
			code = append(code, w[2:])
		case !strings.HasPrefix(w, "-"):
			code = append(code, w)
		}
	}
	return strings.Join(code, "\n"), true
}

// jsArgs reads a node (bun) command line's arguments: the -e/-p code (found), or std when the
// program is standard input.
func jsArgs(args []string) (code string, found, std bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if code, ok := jsInline(w, args[i+1:]); ok {
			return code, true, false
		}
		switch {
		case w == "-":
			return "", false, true
		case w == "--" || !strings.HasPrefix(w, "-"):
			return "", false, false
		case w == "-v" || w == "--version" || w == "-h" || w == "--help":
			return "", false, false
		case isNodeValued(w):
			i++
		}
	}
	return "", false, true
}

// shArgs reads a shell's arguments: the -c string (-c, -ec, -lc …: the first word after the
// options), or std when the program is standard input (-s, or no script).
func shArgs(args []string) (code string, found, std bool) {
	c := false
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-o" || w == "+o" || w == "-O" || w == "+O" || w == "--rcfile" || w == "--init-file":
			i++ // an option's value, not the script
		case w == "--" && i+1 < len(args):
			return args[i+1], c, false
		case w == "--" || !strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "+"):
			if c {
				return w, true, false
			}
			return "", false, false
		case !strings.HasPrefix(w, "--") && strings.ContainsRune(w, 'c'):
			c = true
		}
	}
	return "", false, !c
}

// runInline judges inline code run from each of dirs (the working directories): Python's
// imports (sys.path[0] is the working directory for -c and stdin), node's requires, a shell's
// statements (each again read for a runtime's inline code); and its literals.
func (f *follower) runInline(by string, dirs []string, p inlineProg, depth int) {
	if depth > maxShellNest {
		return
	}
	if file, ok := strings.CutPrefix(p.code, stdinFileMark); ok {
		if !mutated("workspace-program-by-runtime") {
			f.stdinFile(by, dirs, p.lang, file)
		}
		return
	}
	if p.lang == "sh" {
		for _, words := range shellStatements(p.code) {
			progs, why := stmtInline(words, nil)
			if why != "" {
				f.inlineCut(by, dirs, why)
			}
			for _, q := range progs {
				f.runInline(by, dirs, q, depth+1)
			}
		}
		return
	}
	for _, dir := range dirs {
		t := todoFile{filepath.Join(dir, "(inline "+p.lang+" code)"), by, 1}
		if p.lang == "py" {
			f.pyImports(t, dir, p.code)
		} else {
			done := map[jsRef]bool{}
			jsRefs(p.code, func(r jsRef) bool {
				if !done[r] {
					done[r] = true
					f.jsResolve(t, dir, r)
				}
				return f.g.runCut == ""
			})
		}
		f.literalsOf(t, dir, p.code)
	}
}

// inlineCut fails closed for inline code the check cannot read, narrowly: the working
// directories below the root are protected whole (what the code imports from there); at the
// root every change is refused (runCut).
func (f *follower) inlineCut(by string, dirs []string, why string) {
	for _, d := range dirs {
		if d != f.g.ws {
			f.add(d, by)
			continue
		}
		if f.g.runCut == "" {
			f.g.runCut = fmt.Sprintf("%s (started by %s) runs from the workspace's root: every file may be what it imports; "+
				"run the program from a file (python3 app/main.py) or hand it its code with -c", why, relQuote(f.g.ws, by))
		}
	}
}

// unquoteDelim removes a heredoc delimiter's quotes, as bash does.
var unquoteDelim = sync.OnceValue(func() *strings.Replacer { return strings.NewReplacer(`'`, "", `"`, "", `\`, "") })

// maxHeredocs bounds the heredocs one program is read for (past it: not delimited).
const maxHeredocs = 1024

// heredocMark starts the word that stands for a heredoc in a shell program's statement.
const heredocMark = "\x01heredoc"

// heredocs takes a shell program's heredocs out of its text as bash reads them: each `<<WORD`
// (`<<-WORD`, the delimiter's quotes removed) becomes a marker word, a key of bodies, and the
// lines after its line up to the delimiter's (a leading tab dropped for <<-; the end of the
// text when none) its body, taken out of the text (they are not statements). ok false when an
// operator has no delimiter the reader can read, or past maxHeredocs.
func heredocs(text string) (out string, bodies map[string]string, ok bool) {
	if !strings.Contains(text, "<<") {
		return text, nil, true
	}
	bodies = map[string]string{}
	lines := strings.SplitAfter(text, "\n")
	var (
		b     strings.Builder
		arith arithDepth // carried over lines (atk44a F7: `N=$((⏎ 1<<2⏎))`)
	)
	for i := 0; i < len(lines); i++ {
		a := &arith
		if mutated("workspace-heredoc-arith-lines") {
			a = &arithDepth{}
		}
		line, docs := markHeredocs(lines[i], len(bodies), a)
		b.WriteString(line)
		for _, d := range docs {
			if d.delim == "" || len(bodies) >= maxHeredocs {
				return text, nil, false
			}
			var body strings.Builder
			for i++; i < len(lines); i++ {
				l := lines[i]
				if d.dash {
					l = strings.TrimLeft(l, "\t")
				}
				if strings.TrimRight(l, "\r\n") == d.delim {
					break
				}
				body.WriteString(l)
			}
			if i >= len(lines) && !mutated("workspace-heredoc-arith-lines") {
				return text, nil, false // its delimiter never comes: the rest of the text may be a misread (atk44a F7)
			}
			bodies[d.mark] = body.String()
			if !d.quoted && strings.ContainsAny(body.String(), "$`") && !mutated("workspace-inline-stdin-text-unseen") {
				bodies[d.mark] = heredocExpand + body.String() // bash expands it (heredocsIn)
			}
		}
	}
	return b.String(), bodies, true
}

// arithDepth is how deep a shell program's text is in arithmetic, where << is a shift: $(( ))
// and (( )) (paren), $[ ] (brack, bash's older arithmetic, its [ ] nesting counted).
type arithDepth struct{ paren, brack int }

func (a *arithDepth) in() bool { return a.paren > 0 || a.brack > 0 }

type heredoc struct {
	mark, delim string
	dash        bool
	quoted      bool // its body is not expanded (<<'EOF', <<"EOF", <<\EOF)
}

// markHeredocs replaces each heredoc operator of line (outside quotes; not a <<< here-string)
// with a marker word (numbered from n) and returns the heredocs in order.
func markHeredocs(line string, n int, arith *arithDepth) (string, []heredoc) {
	var (
		b     strings.Builder
		docs  []heredoc
		quote byte
	)
	// inside $(( … )), (( … )) or $[ … ], << is a shift (atk43 F7: N=$((1<<2)) hid the rest)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' && strings.HasPrefix(line[i:], "((") && !mutated("workspace-heredoc-arith"):
			arith.paren++
			b.WriteString("((")
			i++
			continue
		case c == ')' && arith.paren > 0 && strings.HasPrefix(line[i:], "))"):
			arith.paren--
			b.WriteString("))")
			i++
			continue
		case c == '$' && strings.HasPrefix(line[i:], "$[") && !mutated("workspace-heredoc-arith-lines"):
			arith.brack++
			b.WriteString("$[")
			i++
			continue
		case c == '[' && arith.brack > 0:
			arith.brack++
		case c == ']' && arith.brack > 0:
			arith.brack--
		case arith.in():
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			b.WriteString(line[i:])
			return b.String(), docs
		case c == '<' && strings.HasPrefix(line[i:], "<<") && !strings.HasPrefix(line[i:], "<<<") && (i == 0 || line[i-1] != '<'):
			if n+len(docs) > maxHeredocs {
				return line, docs // past the bound: heredocs fails closed
			}
			j := i + 2
			d := heredoc{mark: heredocMark + strconv.Itoa(n+len(docs))}
			if j < len(line) && line[j] == '-' {
				d.dash = true
				j++
			}
			for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
				j++
			}
			k := j
			for k < len(line) && strings.IndexByte(" \t\r\n;|&<>()", line[k]) < 0 {
				k++
			}
			d.delim = unquoteDelim().Replace(line[j:k])
			d.quoted = d.delim != line[j:k]
			docs = append(docs, d)
			b.WriteString(" " + d.mark + " ")
			i = k - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), docs
}

// relQuote is p (in ws) as a quoted path from ws.
func relQuote(ws, p string) string {
	rel, _ := filepath.Rel(ws, p)
	return strconv.Quote(filepath.ToSlash(rel))
}
