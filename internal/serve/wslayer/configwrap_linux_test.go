package wslayer

import (
	"path/filepath"
	"testing"
)

// lineProject is a workspace whose config file (rel) holds text, beside server/ (main.py imports
// helper.py), app/main.py, other/main.py and src/index.ts.
func lineProject(t *testing.T, rel, text string) string {
	t.Helper()
	ws := t.TempDir()
	for p, s := range map[string]string{rel: text, "server/main.py": "import helper\n", "server/helper.py": "X = 1\n",
		"app/main.py": "print(1)\n", "other/main.py": "print(1)\n", "src/index.ts": "export {}\n"} {
		write(t, filepath.Join(ws, filepath.FromSlash(p)), s)
	}
	return ws
}

// serverRun: the config's line runs server/main.py, which (and what it imports) is protected;
// other/main.py and the project's sources stay writable.
func serverRun(t *testing.T, ws string) {
	t.Helper()
	for _, p := range []string{"server/main.py", "server/helper.py"} {
		loadRefused(t, ws, p, "starts")
	}
	for _, p := range []string{"other/main.py", "src/index.ts"} {
		loadApplied(t, ws, p)
	}
}

// A declaration builtin assigns (atk47a F4): `export SRV=server; cd "$SRV"`, `readonly SRV=…`,
// a husky `export SRV=server` left $SRV unresolved and server/main.py writable (dash and bash
// run each). Red with mutant workspace-config-shell-declare. An ordinary `export
// NODE_ENV=production; npm test` keeps the sources writable.
func TestCommitConfigLineDeclare(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ file, text string }{
		{".claude/settings.json", claudeHook(`export SRV=server; cd "$SRV" && python3 main.py`)},
		{".claude/settings.json", claudeHook(`readonly SRV=server; cd $SRV && python3 main.py`)},
		{".claude/settings.json", claudeHook(`export SRV="$CLAUDE_PROJECT_DIR/server"; python3 "$SRV/main.py"`)},
		{".claude/settings.json", claudeHook(`export -p >/dev/null; declare -x SRV=server; cd "$SRV" && python3 main.py`)},
		{".husky/pre-commit", "export SRV=server\ncd \"$SRV\"\npython3 main.py\n"},
	} {
		serverRun(t, lineProject(t, k.file, k.text))
	}
	ws := lineProject(t, ".claude/settings.json", claudeHook(`export NODE_ENV=production; npm test && npx tsc --noEmit`))
	for _, p := range []string{"src/index.ts", "server/main.py", "app/main.py"} {
		loadApplied(t, ws, p)
	}
}

// A redirection is not cd's operand (atk47a F4): `cd >/dev/null server`, `cd 2>/dev/null
// server`, `cd > /dev/null server` and `>/dev/null cd server` change into server (dash and bash
// run each); the redirection's file was taken for the directory. Red with mutant
// workspace-config-shell-line-redirects.
func TestCommitConfigLineCdRedirect(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`cd >/dev/null server && python3 main.py`,
		`cd 2>/dev/null server && python3 main.py`,
		`cd > /dev/null server && python3 main.py`,
		`>/dev/null cd server && python3 main.py`,
	} {
		serverRun(t, lineProject(t, ".claude/settings.json", claudeHook(cmd)))
	}
	// a redirection's file is still no program
	ws := lineProject(t, ".claude/settings.json", claudeHook(`cd server 2>/dev/null && python3 main.py >../other/main.py`))
	loadRefused(t, ws, "server/main.py", "starts")
	loadApplied(t, ws, "other/main.py")
}

// A shell's own `${V:-d}` is the shell's to decide (atk47a F5): clientDefaults made it d as if the
// client expanded it, though the line set V: `D=server; cd ${D:-x}` ran server/main.py writable
// (dash and bash run each). A hook, a husky script and a lefthook run are read raw by the shell
// reader; a .mcp.json's `sh -c` argument, which Claude Code expands first, is read as expanded
// too. Red with mutant workspace-config-shell-raw.
func TestCommitConfigLineRawDefault(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ file, text string }{
		{".claude/settings.json", claudeHook(`D=server; cd ${D:-x} && python3 main.py`)},
		{".claude/settings.json", claudeHook(`APP=server/main.py; python3 "${APP:-app/main.py}"`)},
		{".husky/pre-commit", "SRV=server\ncd \"${SRV:-.}\" && python3 main.py\n"},
		{".husky/pre-commit", "APP=server/main.py\npython3 \"${APP:-app/main.py}\"\n"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    srv:\n      run: APP=server/main.py; python3 ${APP:-app/main.py}\n"},
		{".mcp.json", `{"mcpServers": {"s": {"command": "sh", "args": ["-c", "D=x; cd ${D:-server}; python3 main.py"]}}}`},
	} {
		serverRun(t, lineProject(t, k.file, k.text))
	}
	// the default where the line sets nothing is still what sh runs
	ws := lineProject(t, ".claude/settings.json", claudeHook(`cd ${SRV_DIR:-server} && python3 main.py`))
	serverRun(t, ws)
}

// A wrapper that hands an operand to `sh -c` is read as sh -c is (atk47a F8): flock FILE -c CODE,
// su -cCODE, runuser --command=CODE, script -qc CODE, sg GROUP CODE, watch's operands joined, and
// a tool's operand that is a command line (tmux new-session -d CODE, npx -c CODE) ran
// server/main.py writable (util-linux, shadow, procps, tmux and npm run each here). Red with
// mutants workspace-config-shell-wrappers (the glued and joined forms) and
// workspace-config-shell-operands (tmux, npx). A hook's message and jq filter name no program.
func TestCommitConfigLineWrappers(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`flock /tmp/fmt.lock -c 'cd server && python3 main.py'`,
		`su -c'cd server && python3 main.py'`,
		`runuser root --command='cd server && python3 main.py'`,
		`script -qc 'cd server && python3 main.py' /dev/null`,
		`sg root 'cd server && python3 main.py'`,
		`watch -n 1 cd server '&&' python3 main.py`,
		`tmux new-session -d 'cd server && python3 main.py'`,
		`npx -c 'cd server && python3 main.py'`,
	} {
		serverRun(t, lineProject(t, ".claude/settings.json", claudeHook(cmd)))
	}
	ws := lineProject(t, ".claude/settings.json", claudeHook(`jq -r '.tool_input.file_path | select(endswith(".ts"))' | `+
		`xargs npx prettier --write && osascript -e 'display notification "Formatted the main file" with title "Claude"'`))
	for _, p := range []string{"src/index.ts", "server/main.py", "app/main.py", "other/main.py"} {
		loadApplied(t, ws, p)
	}
}

// A runtime's code after a cd in a config's line is read from the directory changed into:
// `cd server && python3 <main.py` and `cd server && python3 -c 'import main'` (dash and bash
// run server/main.py) were read from the workspace's root and the config's directory only.
// Red with mutant workspace-config-shell-cd-inline.
func TestCommitConfigLineCdInline(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`cd server && python3 <main.py`,
		`cd server && python3 -c 'import main'`,
		`cd "$CLAUDE_PROJECT_DIR/server" && python3 - < ./main.py`,
	} {
		serverRun(t, lineProject(t, ".claude/settings.json", claudeHook(cmd)))
	}
}

// A started script's `cd > /dev/null DIR` (the redirection's file a word of its own) is read as
// sh runs it: the script reader took /dev/null for the directory, outside the workspace, and
// failed closed on every change. Red with mutant workspace-config-shell-line-redirects.
func TestCommitScriptCdRedirect(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, script := range []string{
		"cd > /dev/null \"$(dirname \"$0\")/../app\" && exec python3 main.py\n",
		"cd 2> /dev/null \"$(dirname \"$0\")/../app\" || exit 1\nexec python3 main.py\n",
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"sh","args":["srv/run.sh"]}}}`)
		write(t, filepath.Join(ws, "srv", "run.sh"), "#!/bin/sh\n"+script)
		write(t, filepath.Join(ws, "app", "main.py"), "X = 1\n")
		loadRefused(t, ws, "app/main.py", startsIt)
		loadApplied(t, ws, "docs/notes.md")
	}
}
