package wslayer

import "path/filepath"

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
		if name, value, ok := assignment(w); ok {
			vars.set(name, value)
		}
	}
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
