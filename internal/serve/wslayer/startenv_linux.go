package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// A started script's ${APP_DIR:-app} is app only when nothing the reader can see may set
// APP_DIR for it (attack round atk44a F2): only a config's "env" key counted, so a config's
// `env APP_DIR=lib bash scripts/run.sh`, a hook's `APP_DIR=lib bash scripts/run.sh`, an outer
// script's `export APP_DIR=lib` or `APP_DIR=lib exec bash inner.sh`, an .envrc's export or
// dotenv and VS Code's envFile made bash run lib/main.py, writable. Now every protected text
// the follower reads (configs, the programs they start, what those load, the .env files an
// .envrc's dotenv loads) is scanned for the names it may set: a name before `=` or `:` (shell,
// dotenv, JSON, YAML, TOML, `environ["N"] =`) or after export/readonly/declare/typeset/setenv.
// A script's default of a name another of those files may set is unresolved (what runs is not
// known: a runner's word fails closed as any unresolved one), and a script started by a
// statement after which its starter loads names the reader does not see (`set -a; . ./.env`,
// `export $(cat .env)`) has no default taken at all. The files are read in an order the
// scripts do not choose, so a default taken before a later file showed a setter of its name
// has its script read again (lateDefaults).

// maxSetterNames bounds the names recorded; past it every name may be set.
const maxSetterNames = 1 << 16

// setterScans counts the texts the setter scan reads (the tests: a config's strings are one).
var setterScans atomic.Int64

// defaultTaken is a started script whose walk took the default of names.
type defaultTaken struct {
	t     todoFile
	dir   string
	text  string
	names map[string]bool
}

// noteSetters records the names the text of the file path may set for what it starts.
func (f *follower) noteSetters(path, text string) {
	if mutated("workspace-shell-default-setters") {
		return
	}
	f.textSetters(path, text)
	if strings.ContainsAny(text, "\"'\\") && !mutated("workspace-setters-joined") {
		// the words as bash joins them: quotes and backslashes removed, $'…' decoded (atk46a F4)
		f.textSetters(path, shellJoined(text))
		f.ansiSetters(path, text)
	}
}

// textSetters records the names text spells as set: before `=` or `:`, after an export word.
func (f *follower) textSetters(path, text string) {
	setterScans.Add(1)
	f.allexport(path, text) // set -a: every name it assigns, by any form (atk45a F7)
	for i, w := 0, 0; i < len(text) && !f.settersFull; i++ {
		switch c := text[i]; {
		case c == '=' || c == ':':
			if n := nameBefore(text, i); n != "" {
				f.setter(n, path)
			}
			if c == '=' && i-w <= maxBraceWord {
				f.braceSetters(path, text[w:i]) // APP_{DIR,X}=lib
			}
			w = i + 1
		case strings.IndexByte(" \t\n;&|()<>", c) >= 0:
			w = i + 1
		}
	}
	for _, kw := range exportBuiltins {
		for i := 0; ; {
			j := strings.Index(text[i:], kw)
			if j < 0 {
				break
			}
			i += j + len(kw)
			if i-len(kw) > 0 && !strings.ContainsRune(" \t\n;&|(", rune(text[i-len(kw)-1])) || i == len(text) || text[i] != ' ' && text[i] != '\t' {
				continue
			}
			rest := text[i:min(len(text), i+maxShellValue)]
			if e := strings.IndexAny(rest, ";&|\n)"); e >= 0 {
				rest = rest[:e]
			}
			i += len(rest) // each byte once: `export export …` is one statement's words
			for _, w := range strings.Fields(rest) {
				if n, _, _ := strings.Cut(w, "="); n != "" && strings.IndexFunc(n, func(r rune) bool { return r > 127 || !isNameByte(byte(r), 1) }) < 0 {
					f.setter(n, path)
				} else {
					f.braceSetters(path, n) // export APP_{DIR,X}
				}
			}
		}
	}
}

// exportBuiltins export or declare the names of the words after them, to the statement's end.
var exportBuiltins = []string{"export", "readonly", "declare", "typeset", "setenv"}

// nameBefore is the name written just before the '=' or ':' at text[i] (past blanks, a closing
// quote or bracket: `"APP_DIR": `, `environ["APP_DIR"] =`), "" when none or when it is read,
// not set (`${APP_DIR:-app}`, `"$APP_DIR" = x`).
func nameBefore(text string, i int) string {
	j := i
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	for q := 0; q < 2 && j > 0 && (text[j-1] == '"' || text[j-1] == '\'' || text[j-1] == ']'); q++ {
		j--
	}
	e := j
	for j > 0 && e-j < 256 && isNameByte(text[j-1], 1) {
		j--
	}
	if j == e || !isNameByte(text[j], 0) || j > 0 && (text[j-1] == '$' || text[j-1] == '{' || isNameByte(text[j-1], 1)) {
		return ""
	}
	return text[j:e]
}

// setter records that the file path may set name: "" once two files may.
func (f *follower) setter(name, path string) {
	if f.setters == nil {
		f.setters = map[string]string{}
	}
	v, ok := f.setters[name]
	switch {
	case !ok && len(f.setters) >= maxSetterNames:
		f.settersFull = true
	case !ok:
		f.setters[name] = path
	case v != path:
		f.setters[name] = ""
	}
}

// setElsewhere: a file other than the script self may set name for it.
func (f *follower) setElsewhere(name, self string) bool {
	if mutated("workspace-shell-default-setters") {
		return false
	}
	v, ok := f.setters[name]
	return f.settersFull || ok && v != self
}

// scriptDefault is a ${NAME:-…} or ${NAME-…} in a script's text.
var scriptDefault = lazy.Regexp(`\$\{([A-Za-z_][A-Za-z0-9_]*):?-`)

// startedEnv makes unresolved, in the walk of the started script self (text), each name whose
// default another file may set, and every default when its starter loads names unseen.
func (f *follower) startedEnv(self, text string, vars *shellVars) {
	if f.envUnknown[self] && !mutated("workspace-shell-default-setters") {
		vars.opaque = true
	}
	for _, m := range scriptDefault().FindAllStringSubmatch(text, -1) {
		if f.setElsewhere(m[1], self) {
			vars.m[m[1]] = unresolvedSub
		}
	}
}

// startedUnseen marks the files queued from index n on as started where the starter has loaded
// names the reader does not see.
func (f *follower) startedUnseen(n int) {
	if n >= len(f.todo) || mutated("workspace-shell-default-setters") {
		return
	}
	if f.envUnknown == nil {
		f.envUnknown = map[string]bool{}
	}
	for _, t := range f.todo[n:] {
		f.envUnknown[f.g.wsSpelled(t.path)] = true
	}
}

// tookDefaults records the started script t's walk, when it took defaults.
func (f *follower) tookDefaults(t todoFile, dir, text string, vars *shellVars) {
	if len(vars.took) > 0 {
		f.defaulted = append(f.defaulted, defaultTaken{t, dir, text, vars.took})
	}
}

// maxDefaultRounds bounds the rereads of scripts whose defaults a later file showed set.
const maxDefaultRounds = 8

// lateDefaults reads again each script whose walk took a default that a file read after it
// may set (or that a starter loading names unseen started), and follows what that reading adds.
func (f *follower) lateDefaults() {
	if mutated("workspace-shell-default-late") {
		return
	}
	for round := 0; len(f.defaulted) > 0 && f.g.runCut == ""; round++ {
		var redo []defaultTaken
		keep := f.defaulted[:0]
		for _, d := range f.defaulted {
			late := f.envUnknown[d.t.path] && !mutated("workspace-shell-default-setters")
			for n := range d.names {
				late = late || f.setElsewhere(n, d.t.path)
			}
			if late {
				redo = append(redo, d)
			} else {
				keep = append(keep, d)
			}
		}
		f.defaulted = keep
		if len(redo) == 0 {
			return
		}
		if round == maxDefaultRounds {
			r, _ := filepath.Rel(f.g.ws, redo[0].t.path)
			f.g.runCut = fmt.Sprintf("a shell script (%q) whose defaults files read later may set, past %d readings", filepath.ToSlash(r), maxDefaultRounds)
			return
		}
		for _, d := range redo {
			f.cur = d.t.path
			f.shellProgram(d.t, d.dir, d.text)
		}
		f.follow()
	}
}

// envrcDotenv records the names the .env files beside the .envrc file may set (direnv's dotenv
// loads them into the shell the client starts from).
func (f *follower) envrcDotenv(file string) {
	if filepath.Base(file) != ".envrc" {
		return
	}
	dir := filepath.Dir(file)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".env") || e.Name() == ".envrc" || !e.Type().IsRegular() {
			continue
		}
		if n++; n > maxImporters {
			f.settersFull = true // more files than judged: every name may be set
			return
		}
		if b, _, err := readSmall(filepath.Join(dir, e.Name()), maxProgramFile); err == nil {
			f.noteSetters(filepath.Join(dir, e.Name()), string(b))
		}
	}
}
