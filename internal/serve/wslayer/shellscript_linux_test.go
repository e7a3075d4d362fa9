package wslayer

import (
	"path/filepath"
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
