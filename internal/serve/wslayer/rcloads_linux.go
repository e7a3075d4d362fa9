package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// What an allowed .envrc or a trusted mise config loads is protected by what loads it, not by
// how its name looks (attack round atk40 F11): direnv trusts every file an allowed .envrc
// loads (it hashes only .envrc), and mise's trust covers the config file only, so a call that
// wrote `.envrc.private` (source_env_if_exists), `.env` (a bare `dotenv`), `.env.local`
// (dotenv_if_exists) or what mise's `_.file`/`_.source` name had its shell code run, or its
// LD_PRELOAD exported, at the user's next cd. Those files were protected only when they
// existed or looked like scripts. Now, for each such config: every name starting with `.env`
// in its directory (.env, .env.local, .envrc.private, …), there or not; every word after a
// direnv stdlib verb that loads or watches a file (source_env*, source_up*, dotenv*,
// watch_file, source and `.`), and nix's files for `use nix`/`use flake`; and every string of
// mise's `_.file`, `_.source`, `_.path`, `_.python.venv` (and the legacy env_file, dotenv,
// env_path). A word built from a variable or a template protects the names starting with its
// literal part; a mise path that starts with a template other than {{config_root}} protects
// the config's directory whole (at the root: nothing unjudged is applied).

// rcPrefix is a name prefix protected in a directory: the names there starting with it.
type rcPrefix struct {
	prefix string // folded
	by     string // the config, absolute
}

// direnvLoads are direnv's stdlib verbs (and the shell's) whose words name files it loads or watches.
var direnvLoads = map[string]bool{"source_env": true, "source_env_if_exists": true, "source_up": true, "source_up_if_exists": true,
	"dotenv": true, "dotenv_if_exists": true, "watch_file": true, "source": true, ".": true}

// nixFiles are what `use nix` and `use flake` evaluate from the .envrc's directory (shellHook: shell code).
var nixFiles = map[string][]string{"nix": {"shell.nix", "default.nix"}, "flake": {"flake.nix", "flake.lock"}}

// miseConfig: a mise config file the follower reads (hookWords).
func miseConfig(name string) bool {
	switch name {
	case "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml":
		return true
	}
	return false
}

// rcLoads protects what the config file (an .envrc or a mise config) with text loads.
func (f *follower) rcLoads(file, text string) {
	dir := filepath.Dir(file)
	switch name := filepath.Base(file); {
	case name == ".envrc":
		if mutated("workspace-follow-envrc-loads") {
			return
		}
		f.direnv(file, dir, text)
	case miseConfig(name):
		if mutated("workspace-follow-mise-loads") {
			return
		}
		f.mise(file, dir, text)
	default:
		return
	}
	f.prefix(dir, ".env", file) // .env, .env.local, .envrc.private, …: there or not
}

// prefix protects the names in dir starting with prefix.
func (f *follower) prefix(dir, prefix, by string) {
	g := f.g
	if dir != g.ws && !strings.HasPrefix(dir, g.ws+"/") {
		return
	}
	if g.rcPrefix == nil {
		g.rcPrefix = map[string][]rcPrefix{}
	}
	key := fold(g.relOf(dir))
	if len(g.rcPrefix[key]) >= maxImporters {
		if g.runCut == "" && !mutated("workspace-runs-cut-open") {
			g.runCut = fmt.Sprintf("more than %d names loaded by a prefix from one directory", maxImporters)
		}
		return
	}
	g.rcPrefix[key] = append(g.rcPrefix[key], rcPrefix{fold(prefix), by})
}

// rcLoad protects what the word w (a path as the config wrote it) loads, from dir: the file
// there or not (followed when it is there); for a word built from a variable or a template,
// the names starting with its literal part. whole: a start the follower cannot place protects
// dir whole.
func (f *follower) rcLoad(by, dir, w string, depth int, whole bool) {
	w = strings.Trim(w, `"'`+"`;&|()")
	for _, v := range []string{"$PWD/", "${PWD}/", "$(pwd)/", "{{config_root}}/", "{{ config_root }}/"} {
		if rest, ok := strings.CutPrefix(w, v); ok {
			w = "./" + rest
		}
	}
	if w == "" || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "~") || strings.Contains(w, "://") {
		return
	}
	if i := strings.IndexAny(w, "$*?[{"); i >= 0 {
		lit := w[:i]
		if lit == "" {
			if whole && !homeTemplate().MatchString(w) {
				f.wholeDir(by, dir)
			}
			return // $HOME/…: not the workspace
		}
		p := absFrom(dir, lit)
		if strings.HasSuffix(lit, "/") {
			f.add(p, by)
			return
		}
		f.prefix(filepath.Dir(p), filepath.Base(p), by)
		return
	}
	p := absFrom(dir, w)
	if st, err := os.Stat(p); err == nil && st.IsDir() && filepath.Base(by) == ".envrc" {
		p = filepath.Join(p, ".envrc") // source_env DIR loads DIR/.envrc
	}
	if f.add(p, by) && regular(p) {
		f.todo = append(f.todo, todoFile{p, by, depth + 1})
	}
}

// wholeDir protects the config's directory whole; at the workspace's root, nothing not already
// judged is applied.
func (f *follower) wholeDir(by, dir string) {
	if dir != f.g.ws {
		f.add(dir, by)
		return
	}
	if f.g.runCut == "" {
		r, _ := filepath.Rel(f.g.ws, by)
		f.g.runCut = fmt.Sprintf("a path in %s that starts with a template (it may name any file)", strconv.Quote(filepath.ToSlash(r)))
	}
}

// shellSeps end a shell statement: a verb's words stop there.
var shellSeps = strings.NewReplacer(";", "\n", "&&", "\n", "||", "\n", "|", "\n", "`", "\n", "$(", "\n", ")", "\n")

// direnv protects what the .envrc file (text) loads: the words after a loading verb, and nix's files.
func (f *follower) direnv(file, dir, text string) {
	for _, line := range strings.Split(shellSeps.Replace(text), "\n") {
		words := strings.Fields(line)
		for i, w := range words {
			if strings.HasPrefix(w, "#") {
				break
			}
			verb := strings.Trim(w, `"'{}`)
			if verb == "use" || verb == "use_nix" || verb == "use_flake" {
				kind := strings.TrimPrefix(verb, "use_")
				if verb == "use" && i+1 < len(words) {
					kind = words[i+1]
					i++
				}
				for _, n := range nixFiles[kind] {
					f.rcLoad(file, dir, n, 0, false)
				}
				if nixFiles[kind] == nil {
					continue
				}
				for _, a := range words[i+1:] {
					if strings.HasPrefix(a, "#") {
						break
					}
					a, _, _ = strings.Cut(a, "#") // a flake's output: .#dev
					if a == "." || a == "" {
						continue
					}
					f.rcLoad(file, dir, a, 0, false)
				}
				continue
			}
			if !direnvLoads[verb] {
				continue
			}
			dirs := []string{dir}
			if strings.HasPrefix(verb, "source_up") {
				// FILE (.envrc when none) in each directory above: the workspace's part of them
				for d := filepath.Dir(dir); strings.HasPrefix(d+"/", f.g.ws+"/"); d = filepath.Dir(d) {
					dirs = append(dirs, d)
				}
			}
			for _, a := range words[i+1:] {
				if strings.HasPrefix(a, "#") {
					break
				}
				for _, d := range dirs {
					f.rcLoad(file, d, a, 0, false)
				}
			}
		}
	}
}

var (
	tomlString  = lazy.Regexp(`"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'`)
	tomlHeader  = lazy.Regexp(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:#.*)?$`)
	miseLoadKey = lazy.Regexp(`(?:^|\.)_(?:\.|$)`)
	// homeTemplate: a path from the user's home or another absolute place, not the workspace
	homeTemplate = lazy.Regexp(`^(?:\$\{?HOME\b|\$\{?XDG_|\{\{\s*env\.(?:HOME|XDG_)|\{\{\s*xdg_)`)
)

// mise protects what the mise config file (text) loads: the strings of its env directives.
func (f *follower) mise(file, dir, text string) {
	lines := strings.Split(text, "\n")
	section := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := tomlHeader().FindStringSubmatch(line); m != nil {
			section = strings.NewReplacer(" ", "", "\t", "", `"`, "", "'", "").Replace(m[1])
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.NewReplacer(" ", "", "\t", "", `"`, "", "'", "").Replace(k)
		full := k
		if section != "" {
			full = section + "." + k
		}
		load := k == "env_file" || k == "dotenv" || k == "env_path" ||
			(full == "env" || strings.HasPrefix(full, "env.")) && miseLoadKey().MatchString(strings.TrimPrefix(full, "env"))
		if !load {
			continue
		}
		// the value, to where its brackets close (an array or inline table over several lines)
		for depth := bracketDepth(v); depth > 0 && i+1 < len(lines); depth = bracketDepth(v) {
			i++
			v += "\n" + lines[i]
		}
		for _, m := range tomlString().FindAllStringSubmatch(v, -1) {
			s := m[1] + m[2]
			f.rcLoad(file, dir, s, 0, true)
		}
	}
}

// bracketDepth is how many [ and { the TOML value v leaves open (strings skipped).
func bracketDepth(v string) int {
	d, comment := 0, false
	for _, c := range tomlString().ReplaceAllString(v, `""`) {
		if comment && c != '\n' {
			continue
		}
		switch c {
		case '[', '{':
			d++
		case ']', '}':
			d--
		case '#':
			comment = true
		case '\n':
			comment = false
		}
	}
	return d
}

// rcPrefixMatch says which .envrc or mise config loads rel (from the root) by a name prefix, "" when none does.
func (g *gitGuard) rcPrefixMatch(rel string) string {
	if len(g.rcPrefix) == 0 {
		return ""
	}
	parts := strings.Split(fold(rel), "/")
	for i, part := range parts {
		for _, r := range g.rcPrefix[strings.Join(parts[:i], "/")] {
			if strings.HasPrefix(part, r.prefix) {
				by, _ := filepath.Rel(g.ws, r.by)
				return "a file the protected " + strconv.Quote(filepath.ToSlash(by)) +
					" loads at a cd into its directory (direnv's or mise's loads: there or not): shell code or variables the user's shell then runs"
			}
		}
	}
	return ""
}
