package wslayer

import (
	"path/filepath"
	"testing"
)

// An option's value joined by '=' is read as the runtime reads it (attack round atk42, F2):
// `node --import=./instrument.mjs`, `--require=`, `--loader=`, `npx --package=./srv`, `uv run
// --with-editable=./lib`, `uvx --from=./srv`, `uv --directory=srv`, `make -Csrv`, in a config, a
// package.json script and a shell script, were one word naming no file: what they load was
// applied. An ordinary change beside them (and an option's plain value) is still applied.
// Red when the joined forms are not split (mutant workspace-follow-joined-values).
func TestCommitFollowerJoinedOptionValues(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	project := func(ws string) {
		write(t, filepath.Join(ws, "srv/main.js"), "console.log(1)\n")
		write(t, filepath.Join(ws, "srv/main.py"), "print(1)\n")
		write(t, filepath.Join(ws, "srv/package.json"), `{"name":"mcp-x","bin":{"mcp-x":"bin/x.js"}}`)
		write(t, filepath.Join(ws, "srv/bin/x.js"), "console.log(1)\n")
		write(t, filepath.Join(ws, "srv/Makefile"), "run:\n\tpython3 main.py\n")
		write(t, filepath.Join(ws, "srv/pyproject.toml"), "[project]\nname = \"mcp-x\"\n[project.scripts]\nmcp-x = \"mcp_x.server:main\"\n")
		write(t, filepath.Join(ws, "srv/src/mcp_x/server.py"), "def main(): pass\n")
		write(t, filepath.Join(ws, "hooks/x.js"), "")
		write(t, filepath.Join(ws, "lib/pyproject.toml"), "[project]\nname = \"helperlib\"\n")
		write(t, filepath.Join(ws, "lib/helperlib/__init__.py"), "")
		write(t, filepath.Join(ws, "debug/notes.md"), "x\n")
	}
	mcp := func(cmd, args string) string {
		return `{"mcpServers":{"s":{"command":"` + cmd + `","args":[` + args + `]}}}`
	}
	for _, k := range []struct{ config, target string }{
		{mcp("node", `"--import=./hooks/x.js", "srv/main.js"`), "hooks/x.js"},
		{mcp("node", `"--require=./hooks/x.js", "srv/main.js"`), "hooks/x.js"},
		{mcp("node", `"--loader=./hooks/x.js", "srv/main.js"`), "hooks/x.js"},
		{mcp("npx", `"--package=./srv", "mcp-x"`), "srv/bin/x.js"},
		{mcp("uv", `"run", "--with-editable=./lib", "srv/main.py"`), "lib/helperlib/__init__.py"},
		{mcp("uvx", `"--from=./srv", "mcp-x"`), "srv/src/mcp_x/server.py"},
		{mcp("uv", `"--directory=srv", "run", "mcp-x"`), "srv/src/mcp_x/server.py"},
		{mcp("make", `"-Csrv", "run"`), "srv/Makefile"},
		{mcp("bash", `"-c", "node --require=./hooks/x.js srv/main.js"`), "hooks/x.js"},
	} {
		ws := t.TempDir()
		project(ws)
		write(t, filepath.Join(ws, ".mcp.json"), k.config)
		loadRefused(t, ws, k.target, startsIt)
		loadApplied(t, ws, "docs/notes.md")
		loadApplied(t, ws, "debug/notes.md") // --log-level=debug: a value naming a directory of data
	}
	// a package.json script and a shell script the config starts
	ws := t.TempDir()
	project(ws)
	write(t, filepath.Join(ws, ".mcp.json"), mcp("npm", `"start"`))
	write(t, filepath.Join(ws, "package.json"), `{"name":"p","scripts":{"start":"node --log-level=debug --require=./hooks/x.js srv/main.js"}}`)
	loadRefused(t, ws, "hooks/x.js", startsIt)
	loadApplied(t, ws, "docs/notes.md")
	ws = t.TempDir()
	project(ws)
	write(t, filepath.Join(ws, ".mcp.json"), mcp("sh", `"scripts/run.sh"`))
	write(t, filepath.Join(ws, "scripts/run.sh"), "#!/bin/sh\ncd \"$(dirname \"$0\")/..\"\nexec node --import=./hooks/x.js srv/main.js\n")
	loadRefused(t, ws, "hooks/x.js", startsIt)
	loadApplied(t, ws, "docs/notes.md")
}

// A loader variable a config's env sets is read as the .envrc reader reads it (attack round
// atk42, F2): `"PYTHONPATH": "lib"` with `python3 -m mcp_x` or `-c 'import mcp_x'`, in JSON and
// in Codex's TOML, and NODE_OPTIONS's words, protect what they make the server load; the search
// path naming the root (already searched) or an ordinary project's src adds no refusal beyond it.
// Red when a config's env is not read (mutant workspace-follow-config-loader-env).
func TestCommitFollowerConfigLoaderEnv(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	pkg := func(ws string) {
		write(t, filepath.Join(ws, "lib/mcp_x/__init__.py"), "")
		write(t, filepath.Join(ws, "lib/mcp_x/__main__.py"), "print(1)\n")
		write(t, filepath.Join(ws, "hooks/x.js"), "")
		write(t, filepath.Join(ws, "srv/main.js"), "console.log(1)\n")
	}
	for _, k := range []struct{ file, config, target string }{
		{".mcp.json", `{"mcpServers":{"s":{"command":"python3","args":["-m","mcp_x"],"env":{"PYTHONPATH":"lib"}}}}`, "lib/mcp_x/__main__.py"},
		{".mcp.json", `{"mcpServers":{"s":{"command":"python3","args":["-c","import mcp_x"],"env":{"PYTHONPATH":"${workspaceFolder}/lib"}}}}`, "lib/mcp_x/__init__.py"},
		{".mcp.json", `{"mcpServers":{"s":{"command":"python3","args":["-m","mcp_x"],"env":{"PYTHONPATH":"${env:PYTHONPATH}:lib"}}}}`, "lib/mcp_x/__main__.py"},
		{".codex/config.toml", "[mcp_servers.s]\ncommand = \"python3\"\nargs = [\"-m\", \"mcp_x\"]\nenv = { PYTHONPATH = \"lib\" }\n", "lib/mcp_x/__main__.py"},
		{".mcp.json", `{"mcpServers":{"s":{"command":"node","args":["srv/main.js"],"env":{"NODE_OPTIONS":"--require hooks/x.js"}}}}`, "hooks/x.js"},
	} {
		ws := t.TempDir()
		pkg(ws)
		write(t, filepath.Join(ws, k.file), k.config)
		if applied, why, sum := commitOne(t, ws, k.target, "evil\n"); applied {
			t.Errorf("%s: %s applied (%q): %s", k.config, k.target, why, sum)
		}
		loadApplied(t, ws, "docs/notes.md")
	}
	// ordinary projects: the root on PYTHONPATH, a src layout
	for _, env := range []string{`"."`, `"${workspaceFolder}"`, `"src"`, `"${env:PYTHONPATH}"`} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"python3","args":["-m","mcp_x"],"env":{"PYTHONPATH":`+env+`,"LOG_LEVEL":"debug"}}}}`)
		write(t, filepath.Join(ws, "src/mcp_x/__main__.py"), "print(1)\n")
		loadApplied(t, ws, "docs/notes.md")
		loadApplied(t, ws, "tests/test_x.py")
	}
}

// A loader variable a started shell script exports is read as the .envrc reader reads it
// (attack round atk42, F2): `export PYTHONPATH=app; exec python3 -m main` imported app/main.py,
// applied. One the reader cannot resolve fails closed on the script's directory only.
// Red when a script's export is not read (mutant workspace-follow-shell-loader-export).
func TestCommitFollowerShellLoaderExport(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	setup := func(script string) string {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"]}}}`)
		write(t, filepath.Join(ws, "scripts/run.sh"), "#!/bin/bash\nset -euo pipefail\ncd \"$(dirname \"$0\")/..\"\n"+script)
		write(t, filepath.Join(ws, "app/main.py"), "print(1)\n")
		write(t, filepath.Join(ws, "hooks/x.js"), "")
		return ws
	}
	for _, k := range []struct{ script, target string }{
		{"export PYTHONPATH=app\nexec python3 -m main\n", "app/main.py"},
		{"PYTHONPATH=app exec python3 -m main\n", "app/main.py"},
		{"export NODE_OPTIONS=\"--require=./hooks/x.js\"\nexec node srv/main.js\n", "hooks/x.js"},
		{"exec env PYTHONPATH=app python3 -m main\n", "app/main.py"},
	} {
		ws := setup(k.script)
		loadRefused(t, ws, k.target, startsIt)
		loadApplied(t, ws, "docs/notes.md")
	}
	// unresolved ($PWD of a script a config starts): the script's directory (protected as its
	// package anyway), not every change of the workspace
	ws := setup("export PYTHONPATH=\"$PWD/app:${PYTHONPATH:-}\"\nexec python3 -m main\n")
	loadApplied(t, ws, "docs/notes.md")
}

// The dotenv file `--env-file` names is protected, there or not, and its loader variables read
// (attack round atk42, F2): node 20 applies the file's NODE_OPTIONS (`--import=./setup/x.mjs`
// ran first, checked with node 20.20), and `node --env-file=.env` left .env the call's to write.
// Red when what --env-file names is not judged (mutant workspace-follow-env-file).
func TestCommitFollowerEnvFile(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, args := range []string{`"--env-file=.env", "srv/main.js"`, `"--env-file", ".env", "srv/main.js"`} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"node","args":[`+args+`]}}}`)
		write(t, filepath.Join(ws, "srv/main.js"), "console.log(1)\n")
		loadRefused(t, ws, ".env", startsIt) // not there yet: the call's write would make it
		write(t, filepath.Join(ws, ".env"), "PORT=3000\nNODE_OPTIONS='--import=./setup/x.mjs'\n")
		write(t, filepath.Join(ws, "setup/x.mjs"), "")
		loadRefused(t, ws, ".env", startsIt)
		loadRefused(t, ws, "setup/x.mjs", startsIt)
		loadApplied(t, ws, "docs/notes.md")
	}
}
