package wslayer

import (
	"path/filepath"
	"slices"
	"strings"
)

// A config's command line is read as sh runs it (configshell_linux.go), but three of sh's
// statement forms were not (atk47a F4, F5, F8): a declaration builtin's `export SRV=server`
// assigned nothing, a redirection before cd's operand (`cd >/dev/null server`) was taken for the
// directory, and a program that hands an operand to `sh -c` (flock FILE -c CODE, su -c, runuser
// -c, script -c, sg, watch, and any tool whose operand is a command line: tmux, npx -c, nodemon
// --exec) left that code unread. Each form was run with the real program (dash, bash, util-linux
// flock, su, runuser, script, sg, procps watch, tmux, npx) before it was modelled.

// lineRedirects splits a statement's words into its own words and its redirections (each
// operator word with its file, `> /dev/null` two words, `2>/dev/null` one), as sh removes them
// before a command sees its operands: `cd >/dev/null server` changes into server, and a
// redirection before the command (`>/dev/null cd server`) does not hide it.
func lineRedirects(words []string) (core, redirs []string) {
	if mutated("workspace-config-shell-line-redirects") {
		return words, nil
	}
	for i := 0; i < len(words); i++ {
		op, ok := redirection(words[i])
		if !ok {
			core = append(core, words[i])
			continue
		}
		redirs = append(redirs, words[i])
		if op == words[i] && i+1 < len(words) {
			i++
			redirs = append(redirs, words[i]) // the operator's file
		}
	}
	return core, redirs
}

// declBuiltins are the builtins whose NAME=VALUE operands assign (bash, dash: export, readonly
// and local; bash's declare and typeset).
var declBuiltins = map[string]bool{"export": true, "readonly": true, "declare": true, "typeset": true, "local": true}

// declare records the assignments of a declaration builtin's words (its command first):
// `export SRV=server; cd "$SRV"` changes into server as sh does. An option (-x, -r, -g) is
// skipped; a name declare -n makes a reference is the reader's unknown already (unmodeled).
func declare(words []string, vars *shellVars) {
	if len(words) == 0 || !declBuiltins[words[0]] || mutated("workspace-config-shell-declare") {
		return
	}
	for _, w := range words[1:] {
		vars.assign(w) // export SRV+=ver: bash appends (atk49a F8)
	}
}

// maxLineCodes bounds the operands of one statement read as shell code.
const maxLineCodes = 16

// lineCodes are the shell codes the command line words runs by `sh -c`: a shell's -c operand
// (shellCode), a wrapper's (wrapperCode), else each operand holding a blank, which a tool may
// run as a command line (tmux new 'cd server && …', npx -c '…', nodemon --exec '…'): read as
// code, the wider reading (a message's words name no program, a program's name is protected).
func lineCodes(words []string) []string {
	if code, ok := shellCode(words); ok {
		return []string{code}
	}
	if code, ok := wrapperCode(words); ok {
		return []string{code}
	}
	if mutated("workspace-config-shell-operands") {
		return nil
	}
	var out []string
	for _, w := range words[min(1, len(words)):] {
		if strings.ContainsAny(w, " \t\n") && len(out) < maxLineCodes {
			out = append(out, w)
		}
	}
	return out
}

// codeOption are the programs whose option c (short, in a cluster: -mc CODE, -cCODE) or long
// --command / --session-command (=CODE or CODE) hands its value to `sh -c`: util-linux's flock
// (`flock FILE -c CODE`), su, runuser and script, and shadow's sg (`sg GROUP -c CODE`, or its
// second operand: `sg GROUP CODE`).
var codeOption = map[string]bool{"flock": true, "su": true, "runuser": true, "script": true, "sg": true}

// wrapperCode is the code a wrapper among words (codeOption's, or procps' watch, which joins
// its operands with blanks) runs by `sh -c`.
func wrapperCode(words []string) (string, bool) {
	if mutated("workspace-config-shell-wrappers") {
		return "", false
	}
	for j, w := range words {
		switch base := filepath.Base(w); {
		case base == "watch":
			return watchCode(words[j+1:])
		case codeOption[base]:
			if code, ok := optionCode(words[j+1:]); ok {
				return code, true
			}
			if base == "sg" {
				if ops := operands(words[j+1:]); len(ops) > 1 {
					return ops[1], true // sg GROUP CODE
				}
			}
		}
	}
	return "", false
}

// optionCode is the value of the option c or --command (any prefix getopt_long takes of it,
// --session-command) among args.
func optionCode(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break // the command's own words (runuser -u U -- CMD): not the wrapper's options
		}
		if long, ok := strings.CutPrefix(a, "--"); ok {
			name, v, eq := strings.Cut(long, "=")
			if name == "" || !strings.HasPrefix("command", name) && !strings.HasPrefix("session-command", name) {
				continue
			}
			if eq {
				return v, true
			}
			if i+1 < len(args) {
				return args[i+1], true
			}
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		c := strings.IndexByte(a, 'c')
		switch {
		case c < 0:
		case c+1 < len(a):
			return a[c+1:], true // -cCODE, -mcCODE
		case i+1 < len(args):
			return args[i+1], true
		}
	}
	return "", false
}

// operands are args without their options (a word starting with -) and what follows --.
func operands(args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// watchCode is the command procps' watch runs by `sh -c`: its operands after its options
// (-n SECS and --interval SECS valued, -q/--equexit CYCLES too) joined with blanks.
func watchCode(args []string) (string, bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			i++
		case a == "-n" || a == "--interval" || a == "-q" || a == "--equexit":
			continue // and its value, skipped below
		case strings.HasPrefix(a, "-"):
			continue
		case i > 0 && (args[i-1] == "-n" || args[i-1] == "--interval" || args[i-1] == "-q" || args[i-1] == "--equexit"):
			continue
		}
		if i < len(args) {
			return strings.Join(args[i:], " "), true
		}
	}
	return "", false
}

// configShellStrings are the strings of the config file that a shell runs (configShellText) as
// that shell is given them: clientDefaults made each `${V:-d}` its default, as Claude Code
// expands a .mcp.json's, but a hook's command, a lefthook run and a husky script reach sh
// unexpanded, and sh decides `${V:-d}` by what the line itself set (atk47a F5: `D=server; cd
// ${D:-x}` changes into server). The raw text (before clientDefaults) is read for every config;
// the expanded one too where a client may expand (any but clientRaw's), the wider reading.
func configShellStrings(file string, raw, expanded []byte, vals []string) []string {
	out := configShellText(file, string(expanded), vals)
	if string(raw) == string(expanded) || mutated("workspace-config-shell-raw") {
		return out
	}
	rawVals, _ := configDecoded(file, string(raw))
	shell := configShellText(file, string(raw), rawVals)
	if clientRaw(file) {
		return shell
	}
	return append(shell, out...)
}

// clientRaw: no client expands `${V:-d}` in the config file's strings before a shell runs them:
// Claude Code's settings (its hooks' commands; it sets CLAUDE_PROJECT_DIR, clientSets, and the
// shell expands), husky's scripts and the git hook managers' configs (hookWords), which git or
// the manager hands to sh.
func clientRaw(file string) bool {
	dir, name := filepath.Base(filepath.Dir(file)), filepath.Base(file)
	return dir == ".claude" && (name == "settings.json" || name == "settings.local.json") || dir == ".husky" || hookWords(dir, name)
}

// cdInline reads the code the statement line hands a runtime (its -c or -e code, its standard
// input: stmtInline) from each of dirs that a cd in the config's line changed into: the
// config's strings were read for it from the workspace's root and the config's directory only
// (inlineCode), so `cd server && python3 <main.py` and `cd server && python3 -c 'import main'`
// (dash and bash run server/main.py) left server/main.py writable.
func (f *follower) cdInline(by string, dirs, line []string) {
	if mutated("workspace-config-shell-cd-inline") {
		return
	}
	read := uniq(f.g.ws, filepath.Dir(by)) // inlineCode's
	var moved []string
	for _, d := range dirs {
		if !slices.Contains(read, d) {
			moved = append(moved, d)
		}
	}
	if len(moved) == 0 {
		return
	}
	progs, why := stmtInline(line, nil)
	if why != "" {
		f.inlineCut(by, moved, why)
	}
	for _, p := range progs {
		f.runInline(by, moved, p, 0)
	}
}
