package wslayer

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// What an app server imports is set by its command line AND by the config file and the
// environment it reads (attack round atk45a, F8): a hook's `UVICORN_APP_DIR=srv uvicorn
// main:app` (uvicorn's options are read from UVICORN_* variables, the app from UVICORN_APP), a
// config's "env": {"GUNICORN_CMD_ARGS": "--chdir srv"}, a bare `gunicorn` that reads
// ./gunicorn.conf.py (`wsgi_app = 'srv.main:app'`), `gunicorn -c conf/gunicorn.py` (`chdir =
// 'srv'`): read from the command line only, srv/main.py stayed the call's to rewrite though the
// host's gunicorn imported it. Now those variables (a command's prefix, an export, a config's
// env) stand for the options they set, and gunicorn's config file (-c/--config, else
// gunicorn.conf.py in the working directory: protected there or not) is read as a program (its
// imports) and for its wsgi_app, chdir and pythonpath string assignments; a value the reader
// cannot resolve (not a literal) fails closed on the config's directory.

// appEnvNames are the variables that stand for an app server's options; DJANGO_SETTINGS_MODULE
// names the settings module Django imports, whatever starts it.
var appEnvNames = map[string]bool{"UVICORN_APP": true, "UVICORN_APP_DIR": true, "GUNICORN_CMD_ARGS": true,
	"DJANGO_SETTINGS_MODULE": true}

// maxAppEnv bounds the option words recorded for one config's app servers.
const maxAppEnv = 256

// appEnvWords are the command-line words the variable name set to value stands for.
func appEnvWords(name, value string) []string {
	switch name {
	case "UVICORN_APP":
		return []string{value}
	case "UVICORN_APP_DIR":
		return []string{"--app-dir", value}
	case "GUNICORN_CMD_ARGS":
		return splitJoined(strings.Fields(value))
	case "DJANGO_SETTINGS_MODULE":
		return []string{"--settings", value}
	}
	return nil
}

// noteAppEnv records the option words the variable name (value) stands for, for what the config
// by starts; a settings module is followed at once (Django imports it, whatever starts it).
func (f *follower) noteAppEnv(by string, bases []string, name, value string, depth int) {
	if !appEnvNames[name] || value == "" || mutated("workspace-follow-app-env") {
		return
	}
	if name == "DJANGO_SETTINGS_MODULE" && pyDotted().MatchString(value) {
		for _, b := range bases {
			f.appModule(by, b, value, depth)
		}
	}
	if f.appEnv == nil {
		f.appEnv = map[string][]string{}
	}
	for _, w := range appEnvWords(name, value) {
		if len(f.appEnv[by]) < maxAppEnv {
			f.appEnv[by] = append(f.appEnv[by], w)
		}
	}
}

// appEnvAssigned notes the app servers' variables the words assign (a command's prefix
// `UVICORN_APP_DIR=srv uvicorn …`, `export GUNICORN_CMD_ARGS="--chdir srv"`): a quoted value
// split at its blanks is joined again.
func (f *follower) appEnvAssigned(by string, bases, words []string, depth int) {
	for i := 0; i < len(words); i++ {
		name, value, ok := assignment(strings.TrimLeft(words[i], `;&|(`))
		if !ok || !appEnvNames[name] {
			continue
		}
		if q := value; q != "" && (q[0] == '"' || q[0] == '\'') {
			for j := i + 1; j < len(words) && j <= i+maxAppArgs && (len(value) < 2 || !strings.HasSuffix(value, q[:1])); j++ {
				value += " " + words[j]
			}
			value = strings.Trim(value, q[:1]+";&|)")
		}
		f.noteAppEnv(by, bases, name, value, depth)
	}
}

// withAppExtra returns the words (and their marks, appArgs) with the option words an app server
// of them reads from its environment and its config file (appExtra) after them, read as the
// command line's.
func (f *follower) withAppExtra(by string, bases, words, raw []string, in []bool, depth int) ([]string, []bool) {
	f.appEnvAssigned(by, bases, raw, depth) // UVICORN_APP_DIR=srv uvicorn …: an option
	extra := f.appExtra(by, bases, words, raw, in, depth)
	if len(extra) == 0 {
		return words, in
	}
	words = append(append(words, ""), extra...) // "": no option's value across the join
	in = append(in, make([]bool, len(extra)+1)...)
	for i := len(in) - len(extra); i < len(in); i++ {
		in[i] = true
	}
	return words, in
}

// appExtra are the words an app server of the command line words (in: appArgs) also reads: the
// options the variables of the config by stand for, and those of gunicorn's config file (read
// from each of bases, protected there or not).
func (f *follower) appExtra(by string, bases, words, raw []string, in []bool, depth int) []string {
	if in == nil {
		return nil
	}
	extra := slices.Clone(f.appEnv[by])
	if mutated("workspace-follow-app-config") {
		return extra
	}
	for i, w := range words {
		if filepath.Base(w) != "gunicorn" {
			continue
		}
		conf := "gunicorn.conf.py" // its default: in the working directory
		cmd := append(slices.Clone(words[i+1:min(len(words), i+1+maxAppArgs)]), extra...)
		for j := 0; j+1 < len(cmd); j++ {
			if j < len(raw)-i-1 && cmdEnds(raw[i+1+j]) {
				break
			}
			if cmd[j] == "-c" || cmd[j] == "--config" {
				conf = cmd[j+1]
			}
		}
		for _, b := range bases {
			extra = append(extra, f.gunicornConf(by, b, conf, depth)...)
		}
	}
	return extra
}

// gunicornSetting is a module-level assignment of one of gunicorn's settings that place what it
// imports (an annotation allowed).
var gunicornSetting = lazy.Regexp(`(?m)^[ \t]*(wsgi_app|chdir|pythonpath)[ \t]*(?::[^=\n]*)?=[ \t]*([^\n]*)$`)

// pyStringValue is a value that is one plain string literal (a comment after it).
var pyStringValue = lazy.Regexp(`^[rRuU]?(?:'([^'\\\n]*)'|"([^"\\\n]*)")[ \t]*(?:#.*)?$`)

// pyConfOpaque are the ways a Python config may set a name other than by an assignment the
// reader reads: a star import, globals()/vars()/setattr, exec.
var pyConfOpaque = lazy.Regexp(`\b(?:globals|locals|vars|setattr|exec)[ \t]*\(|\bimport[ \t]+\*|__dict__`)

// gunicornConf protects gunicorn's config conf from base b (there or not), has it read as a
// program, and returns the option words its wsgi_app, chdir and pythonpath settings stand for.
// `python:mod` is a config module, followed as one.
func (f *follower) gunicornConf(by, b, conf string, depth int) []string {
	if mod, ok := strings.CutPrefix(conf, "python:"); ok {
		if pyDotted().MatchString(mod) {
			f.appModule(by, b, mod, depth)
		}
		return nil
	}
	if conf == "" || unresolved(conf) >= 0 {
		return nil
	}
	p := f.g.wsSpelled(absFrom(b, conf))
	if !strings.HasPrefix(p, f.g.ws+"/") {
		return nil
	}
	f.add(p, by)
	if !regular(p) {
		return nil
	}
	if filepath.Dir(p) == f.g.ws {
		if f.appConf == nil {
			f.appConf = map[string]bool{}
		}
		f.appConf[p] = true
	}
	f.queue(p, by, depth+1) // a Python program gunicorn runs: its imports
	text, _, err := readSmall(p, maxProgramFile)
	if err != nil {
		return nil
	}
	if pyConfOpaque().Match(text) {
		f.appConfOpen(by, p, "sets names by a route the check does not read")
	}
	var out []string
	chdir := ""
	for _, m := range gunicornSetting().FindAllStringSubmatch(string(text), -1) {
		v := pyStringValue().FindStringSubmatch(strings.TrimSpace(m[2]))
		if v == nil {
			f.appConfOpen(by, p, "sets "+m[1]+" to what the check cannot resolve")
			continue
		}
		val := v[1] + v[2]
		switch m[1] {
		case "wsgi_app":
			out = append(out, val)
		case "chdir":
			chdir = val
			out = append(out, "--chdir", val)
		case "pythonpath":
			out = append(out, "--pythonpath", val)
		}
	}
	if chdir != "" {
		// pythonpath's relative entries are taken after gunicorn's chdir
		for i := 0; i+1 < len(out); i++ {
			if out[i] == "--pythonpath" {
				var pp []string
				for _, e := range strings.Split(out[i+1], ",") {
					pp = append(pp, e, filepath.Join(chdir, e))
				}
				out[i+1] = strings.Join(pp, ",")
			}
		}
	}
	return out
}

// appConfOpen fails closed for the app server's config p, which places what it imports by what
// the reader does not resolve: its directory whole; at the workspace's root, nothing not already
// judged is applied.
func (f *follower) appConfOpen(by, p, why string) {
	if dir := filepath.Dir(p); dir != f.g.ws {
		f.add(dir, by)
		return
	}
	if f.g.runCut == "" {
		r, _ := filepath.Rel(f.g.ws, p)
		f.g.runCut = fmt.Sprintf("the app server's config %s %s: the module it imports may be any file; set wsgi_app, chdir and "+
			"pythonpath to string literals, or keep the config in a directory of its own", strconv.Quote(filepath.ToSlash(r)), why)
	}
}
