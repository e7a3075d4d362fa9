package wslayer

import (
	"fmt"
	"slices"
	"strings"
)

// A config line's loop (attack round atk49a F1): `for f in hooks.d/*; do sh "$f"; done` in a
// Claude hook, a .husky file or a lefthook run left $f unknown, so the files it runs (and a new
// one a call adds to hooks.d) were the call's to rewrite; `for f in server/*.py; do python3
// "$f"; done` ran server/main.py, writable. The started-script reader failed closed on the same
// text. Now the loop's body is read once for each word its list makes (variables expanded,
// bash's brace words), a pattern bound as itself: where the body runs it (the command, a
// runtime's script, a sourced file) every file it matches is read and the directory it lists
// protected whole (a file a call adds there runs too), past maxLoopWords matches the line fails
// closed; elsewhere (`prettier --check "$f"`) it is a tool's argument, as a pattern is. A list
// the reader cannot resolve (`$(git diff --name-only)`), or past maxLoopWords words, leaves the
// name a command's output: a runtime's script or a cd target spelled by it fails closed
// (unplacedRun), a linter's argument does not.

// maxLoopWords bounds the words a config line's loop binds its name to, and the files a
// pattern among them is read to run.
const maxLoopWords = 16

// lineLoop judges the body (the statements between do and done) of the loop `for name in list`
// from each of dirs; it returns the directories the code may be in after it.
func (f *follower) lineLoop(by string, body [][]string, name string, list, dirs []string, depth int, vars *shellVars, docs map[string]string) []string {
	values, known := loopWords(list, vars)
	if !known {
		values = []string{unresolvedSub}
	}
	pats := vars.loopPats
	for _, v := range values {
		if strings.ContainsAny(v, "*?[") && !mutated("workspace-config-shell-for-glob") {
			vars.loopPats = append(vars.loopPats[:len(vars.loopPats):len(vars.loopPats)], v)
		}
	}
	vars.looping++
	for _, v := range values {
		if f.g.runCut != "" {
			break
		}
		vars.m[name] = v
		stmts := make([][]string, len(body))
		for i, st := range body {
			stmts[i] = slices.Clone(st)
		}
		dirs = f.lineStmts(by, stmts, dirs, depth, vars, docs)
	}
	vars.looping--
	vars.loopPats = pats
	vars.m[name] = unresolvedSub // after the loop: its last word, or none
	return dirs
}

// loopWords are the words the list of a loop makes (expanded in vars): each with bash's brace
// words (and dash's word itself); false when one holds what the reader cannot resolve, or past
// maxLoopWords.
func loopWords(list []string, vars *shellVars) ([]string, bool) {
	var out []string
	for _, w := range list {
		if w = vars.expand(w); unresolved(w) >= 0 || strings.Contains(w, "`") {
			return nil, false
		}
		for _, a := range lineBraces(w) {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
		if len(out) > maxLoopWords {
			return nil, false
		}
	}
	return out, true
}

// loopPat: the word w holds a pattern a loop bound a name to.
func (vars *shellVars) loopPat(w string) bool {
	for _, p := range vars.loopPats {
		if strings.Contains(w, p) {
			return true
		}
	}
	return false
}

// loopGlob are the files the word w (holding a loop's pattern) names from dir where the loop
// runs it: every match (each a run of the body), the pattern itself when none matches; the
// directory the pattern lists is protected whole, in the workspace below its root (a file a
// call adds there would run); past maxLoopWords matches the line fails closed.
func (f *follower) loopGlob(by, dir, w string) []string {
	var out []string
	for _, a := range lineBraces(w) {
		if !strings.ContainsAny(a, "*?[") || unresolved(a) >= 0 {
			out = append(out, a)
			continue
		}
		if start, _ := globStart(dir, a); !mutated("workspace-config-shell-for-dir") {
			if d := f.g.wsSpelled(start); d != f.g.ws && f.inWorkspace(d) {
				f.add(d, by)
			}
		}
		r := f.globMatches(dir, a, maxLoopWords+1)
		switch {
		case r.cut || len(r.matches) > maxLoopWords:
			if f.g.runCut == "" {
				f.g.runCut = fmt.Sprintf("a config's command line whose loop runs each file the pattern %q names: more than %d "+
					"(name the files literally)", a, maxLoopWords)
			}
			return out
		case len(r.matches) == 0:
			out = append(out, a)
		default:
			out = append(out, r.matches...)
		}
	}
	return out
}

// unplacedRun is the word of the command line line that a runtime runs as its script (or `.`
// sources) and that starts with what the reader cannot place (unplacedWord): "" when none.
func unplacedRun(line []string, vars *shellVars) string {
	if mutated("workspace-config-shell-unplaced") {
		return ""
	}
	runs := runScripts(line)
	if len(line) > 1 && (line[0] == "." || line[0] == "source") {
		if runs == nil {
			runs = map[int]string{}
		}
		runs[1] = "sh"
	}
	for i := range runs {
		if unplacedWord(line[i], vars) {
			return line[i]
		}
	}
	return ""
}

// unplacedWord: the word w (a runtime's script, a cd target) names what the reader cannot place:
// its first unresolved part is a command's output or a name assigned from one or by what the
// reader does not model (`"$(ls server/m*.py)"`, `F=$(…); python3 "$F"`, a loop's name over
// `$(git diff --name-only)`: atk49a F6, as the started-script reader fails closed on it); it
// starts with any unresolved part after a statement that may set any name (vars.opaque: `export
// $(cat .env)`, atk49a F7) or in a started script's code (vars.started: atk49a F3), there as the
// script's own (a positional parameter or the user's $HOME aside). A variable of the user's
// environment before a path (`"$APP_ROOT"/x.py`) in a config's line is the Known gap.
func unplacedWord(w string, vars *shellVars) bool {
	u := unresolved(w)
	switch {
	case u < 0:
		return false
	case strings.HasPrefix(w[u:], unresolvedSub):
		return true
	case u > 0:
		return false
	case vars.started:
		positional := strings.HasPrefix(w, "$@") || strings.HasPrefix(w, "$*") || len(w) > 1 && w[1] >= '1' && w[1] <= '9'
		return !positional && !homeTemplate().MatchString(w)
	}
	return vars.opaque
}

// lineUnplaced fails closed for the config by's command line whose word w (a runtime's script, a
// cd target) names what the check cannot place.
func (f *follower) lineUnplaced(by, w string) {
	if f.g.runCut == "" {
		f.g.runCut = fmt.Sprintf("a command line in %s whose program or directory %q is a command's output or a value the check "+
			"cannot resolve (it may name any file); name the program or the directory literally", relQuote(f.g.ws, by),
			strings.ReplaceAll(w, unresolvedSub, "$(…)"))
	}
}
