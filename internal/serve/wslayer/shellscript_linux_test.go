package wslayer

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A protected shell script's program is protected however the script computes its path
// (attack round atk41 F14): from `dirname "$0"`, a cd into it, a variable it set, `$(cd … &&
// pwd)`; a start the reader cannot place that leads up, or a program a runner runs from it,
// refuses what no rule judges (the reason named). A common run.sh leaves other edits applied.
// Red without the reader (mutant workspace-follow-shell-reader) or without `dirname "$0"` and
// `$(cd X && pwd)` resolved (mutant workspace-follow-shell-self: the common run.sh locks).
func TestCommitFollowerShellScriptIdioms(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	setup := func(script string) string {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"sh","args":["srv/run.sh"]}}}`)
		write(t, filepath.Join(ws, "srv", "run.sh"), "#!/bin/sh\n"+script)
		write(t, filepath.Join(ws, "app", "main.py"), "X = 1\n")
		return ws
	}
	for _, script := range []string{
		"cd \"$(dirname \"$0\")/../app\" && exec python3 main.py\n",
		"exec python3 \"$(dirname \"$0\")/../app/main.py\"\n",
		"APP=app\nexec python3 \"$APP/main.py\"\n",
		"HERE=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\nexec python3 \"$HERE/../app/main.py\"\n",
		// the canonical forms, a redirection inside (atk42 F4: every change was refused; mutant
		// workspace-shell-redirects)
		"SCRIPT_DIR=\"$( cd -- \"$( dirname -- \"${BASH_SOURCE[0]}\" )\" &> /dev/null && pwd )\"\nexec python3 \"$SCRIPT_DIR/../app/main.py\"\n",
		"D=\"$(cd \"$(dirname \"$0\")\" >/dev/null 2>&1 && pwd)\"\nexec python3 \"$D/../app/main.py\" 2>&1\n",
		"D=\"$(cd \"$(dirname \"$0\")\" > /dev/null && pwd)\"\nexec python3 \"$D/../app/main.py\" >&2\n",
		// the script's path through readlink, its directory by ${0%/*} (mutant workspace-shell-self-forms)
		"D=\"$(dirname \"$(readlink -f \"$0\")\")\"\nexec python3 \"$D/../app/main.py\"\n",
		"exec python3 \"${0%/*}/../app/main.py\"\n",
		"cd \"${BASH_SOURCE[0]%/*}/../app\" && exec python3 main.py\n",
	} {
		ws := setup(script)
		loadRefused(t, ws, "app/main.py", startsIt)
		loadApplied(t, ws, "docs/notes.md")
	}
	for _, script := range []string{"exec python3 \"$APP_HOME/../app/main.py\"\n", "exec python3 \"$(git rev-parse --show-toplevel)/app/main.py\"\n"} {
		ws := setup(script)
		loadRefused(t, ws, "app/main.py", "shell script")
	}
	ws := setup("set -e\ncd \"$(dirname \"$0\")\"\n[ -d .venv ] || python3 -m venv .venv\nexec .venv/bin/python server.py \"$@\"\n")
	write(t, filepath.Join(ws, "srv", "server.py"), "X = 1\n")
	loadRefused(t, ws, "srv/server.py", startsIt)
	loadApplied(t, ws, "app/main.py")
	loadApplied(t, ws, "docs/notes.md")
}

// Ordinary run.sh idioms are read, not failed closed on (atk42 F4: each had every change of
// every call refused): the repository's root by `git rev-parse --show-toplevel`, a default
// `${V:-d}` the script does not set, a `for` over literal words, a cd to the workspace's real
// path; the program each starts is still protected. A cd the reader cannot place names the
// script, not the config, in its reason. Red when they are not modeled (mutant
// workspace-shell-idioms).
func TestCommitFollowerShellRunIdioms(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, script := range []string{
		"cd \"$(git rev-parse --show-toplevel)\" && exec python3 app/main.py\n",
		"ROOT=$(git rev-parse --show-toplevel)\nexec python3 \"$ROOT/app/main.py\"\n",
		"exec python3 \"${APP_DIR:-app}/main.py\"\n",
		"cd \"$(dirname \"$0\")/..\"\nexec python3 \"${APP_DIR-app}/main.py\"\n",
		"cd \"$(dirname \"$0\")/..\"\nfor d in app; do exec python3 \"$d/main.py\"; done\n",
		"cd \"$(dirname \"$0\")/..\"\nfor d in lib app\ndo\n  if [ -f \"$d/main.py\" ]; then\n    exec python3 \"$d/main.py\"\n  fi\ndone\n",
		"cd REAL/app && exec python3 main.py\n",
	} {
		ws, real := linkedWorkspace(t)
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"]}}}`)
		write(t, filepath.Join(ws, "scripts", "run.sh"), "#!/bin/bash\nset -euo pipefail\n"+strings.ReplaceAll(script, "REAL", real))
		write(t, filepath.Join(ws, "app", "main.py"), "X = 1\n")
		if err := exec.Command("git", "init", "-q", ws).Run(); err != nil { // the repository's root
			t.Fatal(err)
		}
		loadRefused(t, ws, "app/main.py", startsIt)
		loadApplied(t, ws, "notes.md")
	}
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"]}}}`)
	write(t, filepath.Join(ws, "scripts", "run.sh"), "#!/bin/bash\ncd \"$SOMEWHERE\"\nexec python3 main.py\n")
	loadRefused(t, ws, "notes.md", "scripts/run.sh")
	// a default the config's env overrides is not the value: ./lib/main.py is what runs (red with
	// mutant workspace-shell-default-config-env)
	ws = t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"],"env":{"APP_HOME":"."}}}}`)
	write(t, filepath.Join(ws, "scripts", "run.sh"), "#!/bin/bash\nexec python3 \"${APP_HOME:-/opt/app}/lib/main.py\"\n")
	write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
	if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
		t.Errorf("lib/main.py, which the config's APP_HOME makes the program, was applied (%q)", why)
	}
}
