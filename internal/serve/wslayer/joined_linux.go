package wslayer

import (
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A command line is read as its runtime parses it (attack round atk42, F2): an option's value
// joined by '=' (`node --import=./instrument.mjs`, `uvx --from=./srv`, `uv run
// --with-editable=./lib`, `npx --package=./srv`) was one word naming no file, so what it loads
// was the call's to rewrite while the space-separated form was protected; a loader variable a
// config's env (`"NODE_OPTIONS": "--require=./hooks/x.js"`, `"PYTHONPATH": "lib"`), a started
// shell script's export, or the file `node --env-file` names set was not read at all. Now the
// joined forms are split before the words are judged (configs, package.json scripts, shell
// scripts alike), and a loader variable set any of these ways is judged as the .envrc reader
// judges it (envValue: its words protected, a search path's directory whole, what it cannot
// resolve failing closed on the directory of the file that sets it).

// splitJoined returns words with each `--opt=value` split into the option and its value (GNU
// getopt_long, node's, uv's and npm's parsers take both spellings alike), and make's and git's
// `-Cdir` into -C and dir. node takes no `-rvalue` (bad option); python's `-mmod` is read by
// pyModuleArg.
func splitJoined(words []string) []string {
	if mutated("workspace-follow-joined-values") {
		return words
	}
	var out []string
	for i, w := range words {
		t := strings.TrimLeft(w, `"'`+"`;&|()")
		opt, val, ok := "", "", false
		switch {
		case strings.HasPrefix(t, "--") && len(t) > 2:
			opt, val, ok = strings.Cut(t, "=")
		case strings.HasPrefix(t, "-C") && len(t) > 2:
			opt, val, ok = "-C", t[2:], true
		}
		if !ok || val == "" || opt == "--" {
			if out != nil {
				out = append(out, w)
			}
			continue
		}
		if out == nil {
			out = append(make([]string, 0, len(words)+1), words[:i]...)
		}
		out = append(out, opt, val)
	}
	if out == nil {
		return words
	}
	return out
}

// envFileOpts are the options whose value is a dotenv file the runtime loads into its
// environment before it starts (node 20's --env-file applies the file's NODE_OPTIONS; uv run's
// and bun's --env-file).
var envFileOpts = map[string]bool{"--env-file": true, "--env-file-if-exists": true}

// envFile protects the dotenv file w (from each of bases), there or not, and has it read as the
// .envrc reader reads a file it sources: its loader variables judged (envValue).
func (f *follower) envFile(by string, bases []string, w string, depth int) {
	if mutated("workspace-follow-env-file") {
		return
	}
	for _, b := range bases {
		p := f.g.wsSpelled(absFrom(b, w))
		if f.add(p, by) && regular(p) {
			f.queue(p, by, depth+1)
		}
		f.rcShell(by, p)
	}
}

// configEnvEntry is a NAME = "value" (TOML), "NAME": "value" (JSON) or NAME: value (YAML) entry
// of a config's env.
var configEnvEntry = lazy.Regexp(`(?m)(?:^|[\s{,])["']?([A-Za-z_][A-Za-z0-9_]*)["']?[ \t]*([:=])[ \t]*` +
	`(?:"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|([^\s"',{}\[\]#][^\n,}#]*))`)

// configEnv judges the loader variables the config file (text) sets for what it starts, from the
// workspace's root (where clients start servers) and the config's directory; one the reader
// cannot resolve fails closed on the config's directory.
func (f *follower) configEnv(file, text string) {
	dir := filepath.Dir(file)
	if filepath.Base(file) == ".envrc" || miseConfig(filepath.Base(dir), filepath.Base(file)) {
		return // read by their own readers, from where they run (rcLoads)
	}
	// every name the config may set for what it starts makes a script's ${NAME:-d} unresolved:
	// startenv's setter scan reads it, with every other protected file's (atk44a F2)
	entries := configEnvEntries(file, text)
	for _, e := range entries {
		f.noteAppEnv(file, uniq(f.g.ws, dir), e[0], e[1], 0) // "GUNICORN_CMD_ARGS": "--chdir srv" (atk45a F8)
	}
	if mutated("workspace-follow-config-loader-env") {
		return
	}
	for _, e := range entries {
		name, value := e[0], e[1]
		if !policy.CodeLoadingEnv(name) {
			continue
		}
		for _, v := range workspaceVars {
			value = strings.ReplaceAll(value, v, "./")
			value = strings.ReplaceAll(value, strings.TrimSuffix(v, "/"), ".")
		}
		value = strings.ReplaceAll(value, "${env:", "${") // VS Code's: the user's own variable
		for _, b := range uniq(f.g.ws, dir) {
			f.loaderEnv(file, b, dir, name, value)
		}
	}
}

// configEnvEntries are the config's env entries (name, value): configEnvEntry's matches, and a
// YAML, TOML or JSON config's name: value entries as its parser gives them (yamlEnv, tomlEnv,
// jsonEnv), read beside the pattern's, never instead.
func configEnvEntries(file, text string) [][2]string {
	var out [][2]string
	for _, m := range configEnvEntry().FindAllStringSubmatch(text, -1) {
		bare := strings.TrimSpace(m[5])
		if m[2] == "=" {
			if fs := strings.Fields(bare); len(fs) > 0 {
				bare = fs[0] // a hook's NAME=value cmd …: the value ends at a blank
			}
		}
		out = append(out, [2]string{m[1], strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[3] + m[4] + bare)})
	}
	if text, yaml := configYAML(file, text); yaml && !mutated("workspace-config-parsed-env") {
		out = append(out, yamlEnv(text)...)
	} else if strings.HasSuffix(file, ".toml") && !mutated("workspace-config-parsed-env") {
		out = append(out, tomlEnv(text)...)
	} else if !mutated("workspace-config-json-env") {
		out = append(out, jsonEnv(text)...)
	}
	return out
}

// loaderEnv judges the loader variable name set to value, from dir, as envValue does; a value it
// cannot resolve fails closed on narrow (the directory of the file that sets it). A PYTHONPATH
// entry naming the workspace's root adds nothing: Python's imports are looked up there already
// (pyImports, module).
func (f *follower) loaderEnv(by, dir, narrow, name, value string) {
	if name == "PYTHONPATH" {
		var keep []string
		for _, e := range strings.Split(value, ":") {
			if e != "" && unresolved(e) < 0 && absFrom(dir, e) == f.g.ws {
				continue
			}
			keep = append(keep, e)
		}
		value = strings.Join(keep, ":")
	}
	f.narrow = narrow
	defer func() { f.narrow = "" }()
	f.envValue(by, dir, name, value)
}

// scriptEnv judges the loader variables the statement words (variables expanded) of the shell
// script t assigns (`export PYTHONPATH=app`, `NODE_OPTIONS=--require=./x.js node srv`), run from dir.
func (f *follower) scriptEnv(t todoFile, dir string, words []string) {
	if mutated("workspace-follow-shell-loader-export") {
		return
	}
	for _, w := range words {
		name, value, ok := assignment(w)
		if ok {
			f.noteAppEnv(t.by, []string{dir}, name, value, t.depth)
		}
		if ok && policy.CodeLoadingEnv(name) {
			f.loaderEnv(t.by, dir, filepath.Dir(t.path), name, value)
		}
	}
}
