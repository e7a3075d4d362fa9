package wslayer

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// A protected shell script is read as bash reads it (attack round atk41 F14): its words were
// split at white space and every word holding a `$` dropped, so the program a run.sh starts by
// the usual idioms (`cd "$(dirname "$0")/../app" && exec python3 main.py`, `exec python3
// "$(dirname "$0")/../app/main.py"`, `APP=app; python3 "$APP/main.py"`, `HERE=$(cd "$(dirname
// "$0")" && pwd)`) was the call's to rewrite. Now the script's statements are read by the bash
// reader (rcshell_linux.go): `$0` and `${BASH_SOURCE[0]}` are the script, `dirname` of it its
// directory, its variables known where it assigned them, a cd followed; its words are then
// judged as a command line's, from its directory and the workspace's root (where clients start
// it) and each it changes into. A word the reader cannot place fails closed (runCut): one whose
// unresolved start leads up (`$X/../app`), one a runner runs or a cd changes into.

// shellScript: the file at p with text is a shell script (not a Makefile or a justfile, whose
// `$(…)` is make's).
func shellScript(p, text string) bool {
	switch filepath.Ext(p) {
	case ".sh", ".bash", ".zsh", ".ksh", ".dash":
		return true
	}
	line, _, _ := strings.Cut(text, "\n")
	if !strings.HasPrefix(line, "#!") {
		return false
	}
	for _, sh := range []string{"/sh", "bash", "zsh", "ksh", "dash", "env sh"} {
		if strings.Contains(line, sh) {
			return true
		}
	}
	return false
}

// shellProgram judges the shell script t (in dir, text) as bash reads it.
func (f *follower) shellProgram(t todoFile, dir, text string) {
	if !shellScript(t.path, text) && !f.runsAs(t.path, "sh") || mutated("workspace-follow-shell-reader") {
		return
	}
	dirs := []string{dir}
	if dir != f.g.ws {
		dirs = append(dirs, f.g.ws)
	}
	raw := text
	docs := map[string]string{}
	if !mutated("workspace-follow-shell-inline") {
		var ok bool
		if text, docs, ok = heredocs(text); !ok {
			f.inlineCut(t.by, []string{dir}, "a heredoc the check cannot delimit in "+relQuote(f.g.ws, t.path))
		}
	}
	vars := f.shellWalk(t.by, dir, dirs, text, func(d string, words []string, vars *shellVars) {
		for _, w := range words {
			vars.assign(w)
		}
		k := command(words)
		for k < len(words) {
			if _, _, ok := assignment(words[k]); !ok {
				break
			}
			k++
		}
		runs := k < len(words) && shellRunners[filepath.Base(words[k])]
		for i := k; i < len(words); i++ {
			w := words[i]
			u := unresolved(w)
			if u < 0 {
				continue
			}
			positional := strings.HasPrefix(w, "$@") || strings.HasPrefix(w, "$*") || len(w) > 1 && w[0] == '$' && w[1] >= '1' && w[1] <= '9'
			up := u == 0 && (strings.Contains(w, "/..") || strings.Contains(w, "../"))
			// the program a runner runs: its first word that is not an option
			ran := runs && i > k && !strings.HasPrefix(w, "-") && firstArg(words[k+1:i]) && u == 0 && !positional &&
				!homeTemplate().MatchString(w) // $HOME/…, $XDG_…: the user's, not the workspace
			if up || ran {
				f.shellCut(t, w)
				return
			}
		}
		f.scriptEnv(t, d, words) // export PYTHONPATH=app, NODE_OPTIONS=… node srv, env X=… cmd
		f.scriptNested(t.by, d, words, docs, vars)
		if !mutated("workspace-follow-shell-inline") {
			// the code it hands a runtime inline (-c, -e, a heredoc to python3 -): atk42 F1
			progs, why := stmtInline(words[k:], vars.heredocsIn(words[k:], docs))
			if why != "" {
				f.inlineCut(t.by, []string{d}, why+" in "+relQuote(f.g.ws, t.path))
			}
			for _, p := range progs {
				f.runInline(t.by, []string{d}, p, 0)
			}
		}
		if !mutated("workspace-shell-cd-expand") {
			// a program's word as sh expands it, as a config line's is (atk48a F3's neighbour)
			f.words(t.by, d, f.shellGlobs(t.by, d, words[k:], vars), t.depth)
			return
		}
		f.words(t.by, d, words[k:], t.depth)
	})
	f.tookDefaults(t, dir, raw, vars)
}

// firstArg: the words before (a runner's) are all options, so the next is what it runs.
func firstArg(before []string) bool {
	for _, w := range before {
		if !strings.HasPrefix(w, "-") && !shellRunners[filepath.Base(w)] {
			return false
		}
	}
	return true
}

// shellCut fails closed for the script t's word w the reader cannot place.
func (f *follower) shellCut(t todoFile, w string) {
	if f.g.runCut != "" {
		return
	}
	rel, _ := filepath.Rel(f.g.ws, t.path)
	f.g.runCut = fmt.Sprintf("a shell script (%s) whose word %s starts with what the check cannot resolve and runs it or leads up "+
		"from it (it may name any file); name the program from the script's directory (cd \"$(dirname \"$0\")\") or literally",
		strconv.Quote(filepath.ToSlash(rel)), strconv.Quote(strings.ReplaceAll(w, unresolvedSub, "$(…)")))
}

// scriptNested reads what the script t's statement words (expanded, from dir) runs in a child
// shell as a config line's statement is read (nestedCodes): `sh -c 'cd server && python3
// main.py'`, `sh <<'EOF'` with that body, `find server -name main.py -execdir python3 {} \;`,
// `flock F -c CODE` left server/main.py writable (fix48-f), the started-script reader reading
// none. The child starts from what the script exports (its export, set -a, the statement's
// prefix and env's assignments); the codes' statements and bytes count against the config
// lines' bounds. An .envrc's, a mise hook's and a file they source are read so too (shellText).
func (f *follower) scriptNested(by, dir string, words []string, docs map[string]string, vars *shellVars) {
	if mutated("workspace-follow-shell-nested") {
		return
	}
	words, redirs := lineRedirects(splitRedirects(words))
	pre := command(words)
	k := pre
	for k < len(words) {
		if _, _, ok := assignment(words[k]); !ok {
			break
		}
		k++
	}
	if k == len(words) {
		vars.assigned(words[pre:]) // under set -a, exported
		return
	}
	vars.exports(words[k:]) // what it hands on (visited once per directory: the same each time)
	line := append(words[k:len(words):len(words)], redirs...)
	f.nestedCodes(by, []string{dir}, line, vars.raw, words[pre:k], docs, vars, 0, true)
}
