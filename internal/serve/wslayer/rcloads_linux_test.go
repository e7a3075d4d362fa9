package wslayer

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What an allowed .envrc loads is protected whether or not it is there and whatever its name
// looks like (attack round atk40 F11): a bare dotenv's .env, dotenv_if_exists .env.local,
// source_env_if_exists .envrc.private (every .env* name beside the .envrc), the words after
// direnv's loading verbs (watch_file, source_up's in the directories above, a path built from
// a variable by its literal start), and use nix's files. Ordinary files, and .env beside no
// .envrc, are applied.
func TestCommitFollowsEnvrcLoads(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "source_env_if_exists .envrc.private\ndotenv\ndotenv_if_exists .env.local\n"+
		"watch_file config/settings\nuse nix\nsource_env_if_exists \"$PWD/envs/$USER\"  # per user\n[ -f x ] && source secrets/env\n")
	write(t, filepath.Join(ws, ".env"), "A=1\n")
	write(t, filepath.Join(ws, "app", ".envrc"), "source_up_if_exists .envrc.up\ndotenv .env.production\n")
	commitJudges(t, ws, []string{".env", ".env.local", ".envrc.private", "shell.nix", "default.nix", "config/settings",
		"envs/alice", "secrets/env", "app/.env.production", "app/.env", "app/.envrc.up"},
		[]string{"notes.txt", "envs.md", "other/.env", "config/other", "app/main.py"})
}

// What a trusted mise config loads at a cd is protected whether or not it is there (attack
// round atk40 F11): the strings of its env directives (_.file, _.source, _.path, in any TOML
// spelling), a {{config_root}} path, a templated one by its literal start, and a path that
// starts with another template protects the config's directory whole. Its ordinary values
// (NODE_ENV = "production") are not paths it loads.
func TestCommitFollowsMiseLoads(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "mise.toml"), "[env]\n_.file = [\".env.shared\", \".env.{{env.USER}}\"]\n_.source = \"env.d/setup\"\n"+
		"_.path = [\n  \"{{config_root}}/tools/bin\", # ours\n  'node_modules/.bin',\n]\nNODE_ENV = \"production\"\n")
	// a table of its own file: beside _.source above, TOML (and mise) refuse it as a redefinition
	write(t, filepath.Join(ws, "mise.local.toml"), "[env._.source]\npath = \"scripts/activate\"\n")
	write(t, filepath.Join(ws, "sub", "mise.toml"), "[env]\n_ = { source = \"{{vars.root}}/setup\" }\n")
	commitJudges(t, ws, []string{".env.shared", ".env.alice", "env.d/setup", "tools/bin/ls", "scripts/activate", "sub/anything.sh"},
		[]string{"production/x", "notes.txt", "scripts/other", "tools/readme.md"})
}

// What an allowed .envrc puts on a search path is protected by what the program says, not by
// a list of verbs (attack round atk40b F3): load_prefix's prefix (its bin, lib), path_add's
// directory for any variable (PYTHONPATH's sitecustomize.py), PATH_add of `$(expand_path …)`,
// MANPATH_add, layout go's bin, the script a runner names without an extension, there or not,
// and every word that names a path (`./tools/x`, `scripts/enter`). A word that names no path is
// no path, and what is not named stays writable.
func TestCommitFollowsEnvrcPathWords(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "load_prefix vendor/local\npath_add PYTHONPATH pylib\n"+
		"PATH_add \"$(expand_path tools2)\"\nMANPATH_add man\nlayout go\nif has x; then bash on-enter; fi\n"+
		"echo \"ready\" && ./scripts/enter --quiet\nuse devenv\n")
	commitJudges(t, ws, []string{"vendor/local/bin/ls", "vendor/local/lib/libc.so.6", "pylib/sitecustomize.py", "tools2/git",
		"man/man1/ls.1", "bin/go", ".direnv/x", "on-enter", "scripts/enter", "devenv.nix"},
		[]string{"src/main.py", "notes.txt", "ready", "vendor/other/x", "has"})
}

// An .envrc's assignments of PATH and of every loader variable are followed (attack round
// atk40b F3): `export PATH=$PWD/tools:$PATH`, NODE_OPTIONS' --require in quotes, LD_PRELOAD
// through a variable the program set, a relative PYTHONSTARTUP; any other variable's words that
// name a path (KUBECONFIG); the user's own environment ($HOME, $PATH) names nothing here; and
// what a sourced .envrc.private exports is read as the .envrc is.
func TestCommitFollowsEnvrcLoaderExports(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "source_env_if_exists .envrc.private\nexport PATH=$PWD/tools:$HOME/bin:$PATH\n"+
		"export NODE_OPTIONS=\"--require $PWD/hooks/preload.cjs --max-old-space-size=4096\"\nroot=\"$(pwd)/native\"\n"+
		"export LD_PRELOAD=\"${root}/libfast.so\"\nPYTHONSTARTUP=startup/py.py\nexport KUBECONFIG=$PWD/kube/config\n"+
		"export NODE_ENV=production\n")
	write(t, filepath.Join(ws, ".envrc.private"), "export BASH_ENV=\"$PWD/private/env.sh\"\n")
	commitJudges(t, ws, []string{"tools/make", "hooks/preload.cjs", "native/libfast.so", "startup/py.py", "kube/config",
		"private/env.sh"},
		[]string{"production/x", "src/app.js", "hooks.md", "bin/x", "native.txt"})
}

// A search path or loader variable whose value the reader cannot resolve fails closed (attack
// round atk40b F3): in a directory's .envrc, the directory whole; at the root (or when it names
// the root: PYTHONPATH=$PWD), nothing unjudged is applied, the reason named.
func TestCommitEnvrcUnresolvedLoaderFailsClosed(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "app", ".envrc"), "export PATH=\"$(npm bin):$PATH\"\n")
	write(t, filepath.Join(ws, "lib", ".envrc"), "path_add PYTHONPATH \"$extra\"\n")
	commitJudges(t, ws, []string{"app/x.js", "lib/y.py"}, []string{"other/z.py", "notes.txt"})
	for _, envrc := range []string{"export PYTHONPATH=$PWD\n", "export LD_LIBRARY_PATH=$(nix eval --raw .#lib)/lib\n", "PATH_add .\n"} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".envrc"), envrc)
		commitJudges(t, ws, []string{"notes.txt", "src/app.py"}, nil)
	}
}

// A trusted mise config's every [env] value is followed as the variable it sets (attack round
// atk40b F3): LD_PRELOAD and PYTHONSTARTUP through {{config_root}}, NODE_OPTIONS' relative
// --require; its [hooks] (shell run at a cd: `bash on-enter`, a multi-line script) and [tasks]
// as shell (not a task's outputs or description); a [tools] `path:` directory; and mise's other config names (.config/mise/config.toml,
// whose config_root is the project's, mise.<env>.toml, .rtx.toml) are read, and protected. An
// option's attached path (RUBYOPT's -r/path) is a path.
func TestCommitFollowsMiseEnvHooks(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "mise.toml"), "[env]\nNODE_OPTIONS = \"--require ./hooks/preload.cjs\"\n"+
		"LD_PRELOAD = \"{{config_root}}/lib/libfast.so\"\nPYTHONSTARTUP = \"{{ config_root }}/tools/startup.py\"\nNODE_ENV = \"production\"\n"+
		"[hooks]\nenter = \"bash on-enter\"\nleave = '''\nsource scripts/leave\n'''\n[tasks.build]\nrun = \"bash tools/build\"\n"+
		"outputs = [\"dist/\"]\ndescription = \"builds docs/site\"\n"+
		"[tools]\nnode = \"path:./local-node\"\n")
	write(t, filepath.Join(ws, ".config", "mise", "config.toml"), "[env]\n_.source = \"env.sh\"\n")
	write(t, filepath.Join(ws, "p2", "mise.production.toml"), "[hooks.cd]\nscript = \"./cd-hook\"\n")
	write(t, filepath.Join(ws, "p3", ".rtx.toml"), "[env]\nRUBYOPT = \"-r{{config_root}}/boot.rb\"\n")
	write(t, filepath.Join(ws, "p4", ".tool-versions"), "nodejs path:./node20\npython 3.12.1\n")
	commitJudges(t, ws, []string{"hooks/preload.cjs", "lib/libfast.so", "tools/startup.py", "on-enter", "scripts/leave",
		"tools/build", "local-node/bin/node", "env.sh", "p2/cd-hook", "p3/boot.rb", "p3/.env.x", "p4/node20/bin/node",
		".config/mise.toml", ".config/mise/conf.d/x.toml", "mise.staging.toml", "mise/config.toml"},
		[]string{"production/x", "notes.txt", "tools/readme.md", "other.sh", "dist/app.js", "docs/site/index.html"})
}

// A huge .envrc costs what the follower's read bounds allow (attack round atk40b F3): a
// variable doubled past the value bound and words each expanding it make at most
// maxShellExpand bytes (not the text's length times the value's), and a commit of such an
// .envrc, path words and unresolved words repeated, is judged as its words say.
func TestCommitEnvrcReadBounded(t *testing.T) {
	line := "echo $a$a$a$a$a$a$a$a $a $a $a $a d/$RANDOM x/y/z ./q\n"
	head := "a=$PWD/x\n" + strings.Repeat("a=$a$a$a$a\n", 20)
	text := head + strings.Repeat(line, (4<<20)/len(line))
	vars, made := newShellVars("/ws/sub"), 0
	for _, st := range shellStatements(text) {
		for _, w := range st {
			made += len(vars.expand(w))
			if n, v, ok := assignment(w); ok {
				vars.set(n, vars.expand(v))
			}
		}
	}
	if made > maxShellExpand+len(text)+maxShellValue {
		t.Errorf("the expansions made %d bytes of a %d-byte text", made, len(text))
	}
	ws := t.TempDir()
	write(t, filepath.Join(ws, "sub", ".envrc"), head+strings.Repeat(line, (256<<10)/len(line)))
	start := time.Now()
	commitJudges(t, ws, []string{"sub/x/y/z", "sub/q", "sub/d/1"}, []string{"notes.txt", "sub/y"})
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the commit took %v", d)
	}
}

// A common .envrc leaves ordinary edits applied (attack round atk40b F3's reader is not a lock):
// its root in a variable, a URL, PYTHONPATH of src (src protected whole), layout python, the
// user's own $PYTHONPATH and $HOME.
func TestCommitEnvrcTypicalKeepsEditsApplied(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "use flake\ndotenv_if_exists\nexport PROJECT_ROOT=$PWD\nexport GOPATH=\"$PWD\"\n"+
		"export PYTHONPATH=\"$PWD/src:$PYTHONPATH\"\nPATH_add node_modules/.bin\nPATH_add \"$HOME/.local/bin\"\nlayout python3\n"+
		"export DATABASE_URL=postgres://localhost:5432/dev\nexport EDITOR=vim\n")
	commitJudges(t, ws, []string{"src/json.py", "flake.nix", ".direnv/python-3.11/bin/python"},
		[]string{"tests/test_app.py", "docs/index.md", "README.md", "app.py"})
}

// A mise config's basic strings are decoded as TOML decodes them (attack round atk41 F2): a
// \u002F in _.source, LD_PRELOAD or a hook, \\ and a multi-line string's line-ending backslash
// name what mise loads; a literal string keeps its backslashes. Red without it (mutant
// workspace-follow-mise-toml-escapes).
func TestCommitMiseTomlEscapes(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "mise.toml"), "[env]\n_.source = \"tools\\u002Fx.sh\"\n"+
		"LD_PRELOAD = \"{{config_root}}/lib\\u002Fevil.so\"\n_.file = \"\"\"conf/\\\n    \\U00000065nv.sh\"\"\"\n"+
		"KUBECONFIG = 'kube\\u002Fconfig'\n[hooks]\nenter = \"bash hooks\\x2Fon-enter\"\n")
	commitJudges(t, ws, []string{"tools/x.sh", "lib/evil.so", "conf/env.sh", "hooks/on-enter"},
		[]string{"notes.txt", "tools/readme.md", "kube/config"})
}

// The .envrc reader fails closed on what it cannot read (attack round atk41 F1): $'…' and $"…"
// are quotes; `dirname "${BASH_SOURCE[0]}"` is the .envrc's directory; a loading verb's word
// whose start it cannot place (`${U:-x}`, `${PWD%/}`, a command's output) leaves the .envrc's
// directory whole (at the root nothing unjudged applied); a name `for`, `read` or `printf -v`
// assigns is not the user's own environment. Red without each (mutants
// workspace-follow-envrc-quotes, workspace-follow-envrc-fail-closed, workspace-follow-envrc-unmodeled).
func TestCommitEnvrcReaderFailsClosed(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "source $'tools/a.sh'\nsource $\"tools/b.sh\"\nPATH_add $'bin2'\n"+
		"source \"$(dirname \"${BASH_SOURCE[0]}\")/tools/c.sh\"\n")
	commitJudges(t, ws, []string{"tools/a.sh", "tools/b.sh", "bin2/evil", "tools/c.sh"}, []string{"notes.txt", "tools/readme.md"})
	// ${V:-d} with V unset by the program is d (atk42 F4): what it sources, no more
	ws = t.TempDir()
	write(t, filepath.Join(ws, "sub", ".envrc"), "source \"${U:-tools/x.sh}\"\n")
	commitJudges(t, ws, []string{"sub/tools/x.sh"}, []string{"notes.txt", "sub/tools/evil"})
	for _, envrc := range []string{
		"source_env \"$(git rev-parse --show-toplevel)/tools/x.sh\"\n" /* not a repository */, "for D in tools; do PATH_add \"$D\"; done\n",
		"read -r TOOLS <<< tools\nPATH_add \"$TOOLS\"\n", "printf -v TOOLS '%s' tools\nexport PATH=\"$PWD/$TOOLS:$PATH\"\n"} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "sub", ".envrc"), envrc)
		commitJudges(t, ws, []string{"sub/tools/x.sh", "sub/tools/evil"}, []string{"notes.txt"})
	}
}

// A cd, pushd or popd in an .envrc is followed (attack round atk41 F1): what it sources after
// a cd is protected from the directory it changed into; a cd the reader cannot place refuses
// what no rule judges. Red without it (mutant workspace-follow-envrc-cd).
func TestCommitEnvrcCdFollowed(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "cd tools\nsource ./x.sh\ncd ..\npushd lib >/dev/null\nsource y.sh\npopd\n")
	commitJudges(t, ws, []string{"tools/x.sh", "lib/y.sh"}, []string{"notes.txt", "tools/readme.md"})
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "cd \"$SOMEWHERE\"\nsource ./x.sh\n")
	commitJudges(t, ws, []string{"notes.txt"}, nil)
}

// The common idioms of an .envrc's loader values keep ordinary edits applied (atk41 F1's
// fail-closed reading is not a lock): the user's own value appended with ${VAR:+…}.
func TestCommitEnvrcUserValueIdioms(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".envrc"), "export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$PWD/lib\n"+
		"export PYTHONPATH=\"$PWD/src${PYTHONPATH:+:$PYTHONPATH}\"\nsource_env_if_exists \"$HOME/.envrc.shared\"\n")
	commitJudges(t, ws, []string{"lib/libx.so", "src/json.py"}, []string{"notes.txt", "tests/test_app.py"})
}
