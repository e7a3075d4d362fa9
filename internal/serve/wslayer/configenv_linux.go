package wslayer

import (
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// What a config's line hands on to the code it runs (attack round atk48a F4): a nested code (a
// `sh -c` operand, a heredoc body fed to a shell, a wrapper's code) was read with none of its
// parent's variables but the client's, so `SRV=server sh -c 'cd "$SRV" && python3 main.py'`
// (the statement's own assignment, in the child's environment) and `export SRV=server; sh
// <<'EOF'` with `cd "$SRV" && python3 main.py` in a quoted body (which the parent does not
// expand) left server/main.py writable; dash and bash run it. A nested code now starts from what
// its shell exports, as sh hands it on: names export or declare -x exported (less export -n's,
// declare +x's and unset's), every name assigned under set -a, what a sourced file sets (its
// statements read as its sourcer's), the statement's prefix assignments and env's (env N=v,
// less env -u N; env -i: env's own only). The parent's reader has removed the code's quotes and
// expanded it as if double-quoted; the code is also read unexpanded (as single-quoted) where
// that differs: `SRV=app; sh -c 'cd "${SRV:-server}" …'` runs server/main.py, the child not
// having SRV. A loader variable the line assigns (`PYTHONPATH=server python3 -m main`) is
// judged as a started script's export is (scriptEnv). Each form was run with dash and bash.

// lineVars are the variables a config's line starts with: the client's project.
func (f *follower) lineVars(dir string) *shellVars {
	vars := newShellVars(dir)
	for n := range projectVars {
		vars.m[n] = f.g.ws // the client's project (a hook runs from it, CLAUDE_PROJECT_DIR set)
	}
	return vars
}

// lineEnv is what a statement adds to (own) and takes from (drop; clear: all) the environment
// of what it runs.
type lineEnv struct {
	own   [][2]string
	drop  []string
	clear bool
}

// stmtEnv reads a statement's prefix assignments (pre) and the env words among its command line
// (line): env's assignments, -u/--unset NAME, -i/--ignore-environment/-.
func stmtEnv(pre, line []string) lineEnv {
	var e lineEnv
	for _, w := range pre {
		if n, v, ok := assignment(w); ok {
			e.own = append(e.own, [2]string{n, v})
		}
	}
	if mutated("workspace-config-shell-env-words") {
		return e
	}
	for j, w := range line {
		if filepath.Base(w) == "env" {
			e.envArgs(line[j+1:])
		}
	}
	return e
}

// envArgs reads GNU env's arguments up to its command, as its getopt does.
func (e *lineEnv) envArgs(args []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if n, v, ok := assignment(a); ok {
			e.own = append(e.own, [2]string{n, v})
			continue
		}
		value := func(rest string) string {
			if rest != "" {
				return rest
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		if long, ok := strings.CutPrefix(a, "--"); ok {
			name, v, eq := strings.Cut(long, "=")
			switch {
			case long == "":
				continue // the options' end; the assignments and command follow
			case strings.HasPrefix("ignore-environment", name):
				e.clear = true
			case strings.HasPrefix("unset", name) && len(name) > 1:
				if !eq {
					v = value("")
				}
				e.drop = append(e.drop, v)
			case !eq && (strings.HasPrefix("chdir", name) || strings.HasPrefix("split-string", name) && len(name) > 1):
				value("")
			}
			continue
		}
		if a == "-" {
			e.clear = true
			continue
		}
		if len(a) < 2 || a[0] != '-' {
			return // the command
		}
	cluster:
		for c := 1; c < len(a); c++ {
			switch a[c] {
			case 'i':
				e.clear = true
			case 'u':
				e.drop = append(e.drop, value(a[c+1:]))
				break cluster
			case 'C', 'S':
				value(a[c+1:])
				break cluster
			}
		}
	}
}

// childCopied counts the exported names copied into nested codes' variables (the tests).
var childCopied atomic.Int64

// childVars are the variables a nested code of the shell whose variables are parent starts
// with (from dir): what parent exports, as e changes it, and the client's project.
func (f *follower) childVars(parent *shellVars, dir string, e lineEnv) *shellVars {
	c := f.lineVars(dir)
	c.started, c.loopPats = parent.started, parent.loopPats
	if mutated("workspace-config-shell-child-env") {
		return c
	}
	c.exported = map[string]bool{}
	// the copy is charged to the statements' bound, a statement per 16 names (1,100 names
	// exported and 16,000 `sh -c x` after them: 2.3 s, 1.1 GB allocated, uncharged); past the
	// bound the child's first statement is cut
	if !mutated("workspace-config-shell-child-charge") {
		if f.lines.stmts += len(parent.exported) / 16; f.lines.stmts > maxConfigStmts {
			return c
		}
	}
	if !e.clear {
		// what an eval or a computed export of the parent set may be exported (atk49a F7)
		c.opaque = parent.opaque && !mutated("workspace-config-shell-opaque")
		childCopied.Add(int64(len(parent.exported)))
		for n := range parent.exported {
			v, ok := parent.m[n]
			if !ok {
				continue
			}
			c.m[n], c.exported[n] = v, true
			if parent.unknown[n] {
				c.markUnknown(n)
			}
		}
	}
	for _, n := range e.drop {
		c.unset(n)
	}
	for _, a := range e.own {
		c.unset(a[0]) // its value now, whatever the parent's was
		c.set(a[0], a[1])
		c.exported[a[0]] = true
	}
	for n := range projectVars {
		c.m[n] = f.g.ws
	}
	return c
}

func (vars *shellVars) markUnknown(n string) {
	if vars.unknown == nil {
		vars.unknown = map[string]bool{}
	}
	vars.unknown[n] = true
}

func (vars *shellVars) unset(n string) {
	delete(vars.m, n)
	delete(vars.unknown, n)
	delete(vars.exported, n)
}

func (vars *shellVars) export(n string, on bool) {
	if !on {
		delete(vars.exported, n)
		return
	}
	if vars.exported == nil {
		vars.exported = map[string]bool{}
	}
	if _, ok := vars.exported[n]; ok || len(vars.exported) < maxShellVars {
		vars.exported[n] = true
	}
}

// assigned records a statement of assignments alone (words): under set -a each is exported.
func (vars *shellVars) assigned(words []string) {
	if !vars.allexport || mutated("workspace-config-shell-exports") {
		return
	}
	for _, w := range words {
		if n, _, ok := assignment(w); ok {
			vars.export(n, true)
		}
	}
}

// exports records what the statement whose command starts words does to the names exported:
// export N[=v] and declare/typeset -x (export -n, declare +x: no longer), readonly, local and
// declare under set -a, unset N (the name gone), set -a/-o allexport (+a, +o: off).
func (vars *shellVars) exports(words []string) {
	if mutated("workspace-config-shell-exports") {
		return
	}
	args := words[1:]
	switch words[0] {
	case "export", "declare", "typeset", "readonly", "local":
		on, off := words[0] == "export" || vars.allexport, false
		for _, w := range args {
			if w == "--" {
				continue
			}
			if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "+") {
				switch {
				case strings.Contains(w, "f"):
					return // functions
				case w[0] == '-' && strings.Contains(w, "x"):
					on = true
				case w[0] == '+' && strings.Contains(w, "x"), words[0] == "export" && w[0] == '-' && strings.Contains(w, "n"):
					off = true
				}
				continue
			}
			n, _, ok := assignment(w)
			if !ok {
				n = w
			}
			switch {
			case off:
				vars.export(n, false)
			case on:
				vars.export(n, true)
			}
		}
	case "unset":
		for _, w := range args {
			switch {
			case strings.HasPrefix(w, "-") && strings.Contains(w, "f"):
				return // functions
			case !strings.HasPrefix(w, "-"):
				vars.unset(w)
			}
		}
	case "set":
		for i, w := range args {
			switch {
			case (w == "-o" || w == "+o") && i+1 < len(args) && args[i+1] == "allexport":
				vars.allexport = w == "-o"
			case w == "-o" || w == "+o" || w == "allexport":
			case w == "--" || w == "-" || len(w) < 2 || w[0] != '-' && w[0] != '+':
				return // the positional parameters
			case strings.Contains(w, "a"):
				vars.allexport = w[0] == '-'
			}
		}
	}
}

// rawCodes are codes (the codes of a statement whose words the shell expanded) and those of its
// words unexpanded (raw, as split by the reader) that differ: a single-quoted code, which its
// child shell expands in its own variables.
func rawCodes(codes, raw []string) []string {
	if mutated("workspace-config-shell-raw-codes") {
		return codes
	}
	core, redirs := lineRedirects(splitRedirects(raw))
	k := command(core)
	for k < len(core) {
		if _, _, ok := assignment(core[k]); !ok {
			break
		}
		k++
	}
	if k == len(core) {
		return codes
	}
	out := codes
	for _, c := range lineCodes(append(core[k:len(core):len(core)], redirs...)) {
		if !slices.Contains(out, c) {
			out = append(out[:len(out):len(out)], c)
		}
	}
	return out
}

// lineLoaders judges the loader variables a config line's statement (words, expanded) assigns
// (PYTHONPATH=server python3 -m main, export NODE_OPTIONS=…, env PYTHONPATH=… cmd) from each
// of dirs, as a started script's (scriptEnv).
func (f *follower) lineLoaders(by string, dirs, words []string) {
	if mutated("workspace-config-shell-loaders") {
		return
	}
	for _, w := range words {
		name, value, ok := assignment(w)
		if !ok {
			continue
		}
		f.noteAppEnv(by, dirs, name, value, 1)
		if policy.CodeLoadingEnv(name) {
			for _, d := range dirs {
				f.loaderEnv(by, d, filepath.Dir(by), name, value)
			}
		}
	}
}

// lineSource reads the file a `.` or `source` statement (words) runs in the shell itself, from
// each of dirs, as its statements in the shell's variables: what it assigns and exports is the
// sourcer's, and a cd in it moves the sourcer (the dirs returned). Its text is charged to the
// config lines' bound. read: a file was read (else what it sets is not known: vars.opaque).
func (f *follower) lineSource(by string, dirs, words []string, vars *shellVars, depth int) (out []string, read bool) {
	args := words[1:]
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 || depth >= maxLineNest || unresolved(args[0]) >= 0 || strings.HasPrefix(args[0], "~") || mutated("workspace-config-shell-source") {
		return dirs, false
	}
	out = dirs
	seen := map[string]bool{}
	for _, d := range dirs {
		p := f.g.wsSpelled(absFrom(d, args[0]))
		if seen[p] || !strings.HasPrefix(p, f.g.ws+"/") {
			continue
		}
		seen[p] = true
		b, cut, err := readSmall(p, maxConfigLines-f.lines.bytes)
		if err != nil {
			continue
		}
		read = true
		if f.lines.bytes += len(b); cut {
			f.linesCut()
			return out, read
		}
		for _, e := range f.shellLine(by, string(b), slices.Clone(dirs), depth+1, vars) {
			if !slices.Contains(out, e) && len(out) < maxShellDirs {
				out = append(out[:len(out):len(out)], e)
			}
		}
	}
	return out, read
}
