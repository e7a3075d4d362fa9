package wslayer

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// find's actions run a command on the files it finds, and GNU parallel runs one on each of its
// `:::` items (attack round atk48a F8): `find server -name main.py -execdir python3 {} \;`
// names no file, so server/main.py was writable (find runs `python3 ./main.py` from server/).
// A command that runs what it is given (`{}` its program or a runtime's script, a directory
// option's value, or handed to `sh -c` code as a positional parameter) or, under -execdir and
// -okdir, runs code from each match's directory, may run any file below find's start paths:
// those are protected whole (fail closed: the expression's tests are not matched), and a start
// at or above the workspace's root, or one the reader cannot resolve, leaves every change not
// judged (runCut). A parallel item that is a pattern may be any of its matches (the shell
// expands every one): the directory before its first wildcard is protected, as a pattern a
// walk was cut in (globCut). The wrappers that run their operands as a command (xargs,
// timeout, nice, nohup, stdbuf, ionice, chrt, taskset, time, command, builtin, exec -a, entr,
// watchexec, nodemon --exec) were read already: each names its program among its words.

// findActions are find's actions that run a command, true for those run from each match's
// directory.
var findActions = map[string]bool{"-exec": false, "-ok": false, "-execdir": true, "-okdir": true}

// findExec protects what a find among line's words (a statement's, run from each of dirs) may
// hand a command that runs it.
func (f *follower) findExec(by string, dirs, line []string) {
	if mutated("workspace-config-find-exec") {
		return
	}
	f.parallelItems(by, dirs, line)
	j := slices.IndexFunc(line, func(w string) bool { return filepath.Base(w) == "find" })
	if j < 0 {
		return
	}
	args := line[j+1:]
	i := 0
opts:
	for i < len(args) {
		switch a := args[i]; {
		case a == "-H" || a == "-L" || a == "-P" || strings.HasPrefix(a, "-O") && len(a) > 2:
			i++
		case a == "-D":
			i += 2
		case a == "--":
			i++
			break opts
		default:
			break opts
		}
	}
	var starts []string
	for ; i < len(args) && !findExpr(args[i]); i++ {
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []string{"."} // GNU find's default
	}
	for ; i < len(args); i++ {
		fromMatch, ok := findActions[args[i]]
		if !ok {
			continue
		}
		action, end := args[i], i+1
		for end < len(args) && args[end] != ";" && args[end] != "+" {
			end++
		}
		cmd := args[i+1 : end]
		i = end
		if givenRun(cmd, fromMatch) {
			f.givenFrom(by, dirs, starts, "find's "+action)
		}
	}
}

// findExpr: w starts find's expression (a test, an action, an operator), after the start paths.
func findExpr(w string) bool {
	return strings.HasPrefix(w, "-") && w != "-" || w == "(" || w == "!" || w == ")" || w == ","
}

// givenRun: the command cmd runs what it is given for `{}` (fromDir: or runs code from the
// given file's directory, find's -execdir).
func givenRun(cmd []string, fromDir bool) bool {
	if len(cmd) == 0 {
		return false
	}
	given := func(w string) bool { return strings.Contains(w, "{}") }
	if given(cmd[0]) {
		return true // -exec {} ;: each file is the program
	}
	if shellNoexec(cmd) && !mutated("workspace-config-find-noexec") {
		return false // bash -n {}: a syntax check, nothing run (atk49a F9)
	}
	start := runtimeStarts(cmd)
	scripts := runScripts(cmd)
	for i, w := range cmd {
		switch {
		case fromDir && (start(i) || i == 0 && strings.Contains(w, "/") && !filepath.IsAbs(w)):
			return true // a runtime or a relative program from a directory below the starts
		case !given(w):
		case scripts[i] != "", i > 0 && dirFlag(cmd[i-1]):
			return true // python3 {}, make -C {}
		}
	}
	_, code := shellCode(cmd)
	return code && slices.ContainsFunc(cmd, given) // sh -c 'cd "$(dirname "$1")" && …' _ {}
}

// shellNoexec: cmd is a shell run with noexec (-n, -o noexec: it reads its script or -c code
// and runs none of it, its startup files neither) and not interactive (-i, where bash and dash
// ignore -n); an option it does not know reads as running.
func shellNoexec(cmd []string) bool {
	if len(cmd) == 0 || runtimeLang(cmd[0]) != "sh" {
		return false
	}
	noexec := false
	for k := 1; k < len(cmd); k++ {
		w := cmd[k]
		switch {
		case w == "-o" || w == "+o":
			if k+1 >= len(cmd) {
				return false
			}
			if cmd[k+1] == "noexec" {
				noexec = w == "-o"
			}
			k++
		case w == "-O" || w == "+O" || w == "--rcfile" || w == "--init-file":
			k++ // a shopt name, a file: its value
		case w == "--":
			return noexec
		case strings.HasPrefix(w, "--"):
			// bash's long options without a value (--norc, --posix, --noprofile)
		case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			for _, c := range w[1:] {
				switch c {
				case 'n':
					noexec = w[0] == '-'
				case 'i', 'o', 'O':
					return false
				}
			}
		default:
			return noexec // the script, or -c's code and its words
		}
	}
	return noexec
}

// givenFrom protects the start paths (from each of dirs) whose files the command what runs may be
// given: whole; at or above the root, or not resolved, every change not judged.
func (f *follower) givenFrom(by string, dirs, starts []string, what string) {
	for _, s := range starts {
		for _, d := range dirs {
			if strings.HasPrefix(s, "~") {
				break // the user's home
			}
			p := f.g.wsSpelled(absFrom(d, s))
			switch {
			case unresolved(s) >= 0 || f.covers(p):
				if f.g.runCut == "" {
					f.g.runCut = fmt.Sprintf("%s in %s runs files below %q, the workspace's root or what the check cannot resolve: "+
						"every file may be run; start it in a directory below the root (find tools -name …)", what, relQuote(f.g.ws, by), s)
				}
			case strings.HasPrefix(p, f.g.ws+"/"):
				f.add(p, by)
			}
		}
	}
}

// parallelItems protects what GNU parallel among line's words may run of its `:::` items (a
// pattern: any of its matches) when its command runs what it is given: the item, appended when
// the command holds no `{}`, is its program or a runtime's script.
func (f *follower) parallelItems(by string, dirs, line []string) {
	j := slices.IndexFunc(line, func(w string) bool { return filepath.Base(w) == "parallel" })
	if j < 0 {
		return
	}
	args := line[j+1:]
	sep := slices.IndexFunc(args, func(w string) bool { return w == ":::" || w == ":::+" })
	if sep < 0 {
		return
	}
	k := 0
	for k < sep && strings.HasPrefix(args[k], "-") {
		k++ // its options (a valued one's value is taken for the command: the wider reading)
	}
	cmd := args[k:sep]
	if !slices.ContainsFunc(cmd, func(w string) bool { return strings.Contains(w, "{}") }) {
		cmd = append(cmd[:len(cmd):len(cmd)], "{}")
	}
	if !givenRun(cmd, false) {
		return
	}
	for _, it := range args[sep+1:] {
		if it == ":::" || it == ":::+" || !strings.ContainsAny(it, "*?[") {
			continue // a literal item names its file among the line's words
		}
		fixed, _, _ := strings.Cut(it, "*")
		fixed, _, _ = strings.Cut(fixed, "?")
		fixed, _, _ = strings.Cut(fixed, "[")
		f.givenFrom(by, dirs, []string{filepath.Dir(fixed + "x")}, "parallel's item "+it)
	}
}
