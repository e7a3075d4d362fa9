package wslayer

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
