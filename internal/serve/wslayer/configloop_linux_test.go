package wslayer

import (
	"path/filepath"
	"testing"
)

// A config line's loop runs each file its list names (atk49a F1): `for f in server/*.py; do
// python3 "$f"; done` in a Claude hook, a .husky file or a lefthook run, and `for d in serv*/;
// do (cd "$d" && python3 main.py); done`, left server/main.py writable, and `for f in hooks.d/*;
// do sh "$f"; done` a new hooks.d/b.sh (dash and bash run each). Red with mutants
// workspace-config-shell-for (the body read once, its name unknown), workspace-config-shell-for-glob
// (a pattern's first match only) and workspace-config-shell-for-dir (the listed directory not
// protected). A loop that lints or formats the files it lists keeps them writable.
func TestCommitConfigLineLoop(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ file, text string }{
		{".claude/settings.json", claudeHook(`for f in server/*.py; do python3 "$f"; done`)},
		{".claude/settings.json", claudeHook(`for f in server/m*.py server/h*.py; do python3 "$f"; done`)},
		{".claude/settings.json", claudeHook(`for d in serv*/; do (cd "$d" && python3 main.py); done`)},
		{".claude/settings.json", claudeHook(`for d in app server; do cd "$CLAUDE_PROJECT_DIR/$d" && python3 main.py; done`)},
		{".husky/pre-commit", "for f in server/*.py; do\n  python3 \"$f\"\ndone\n"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    t:\n      run: for f in server/*.py; do python3 \"$f\"; done\n"},
	} {
		t.Log(k.text)
		serverRun(t, lineProject(t, k.file, k.text))
	}
	for _, cmd := range []string{`for f in hooks.d/*; do sh "$f"; done`, `for f in hooks.d/*.sh; do "$f"; done`} {
		ws := lineProject(t, ".claude/settings.json", claudeHook(cmd))
		write(t, filepath.Join(ws, "hooks.d", "a.sh"), "echo\n")
		write(t, filepath.Join(ws, "hooks.d", "c.sh"), "echo\n")
		loadRefused(t, ws, "hooks.d/c.sh", "starts")
		loadRefused(t, ws, "hooks.d/b.sh", "starts") // a new one runs too
		loadApplied(t, ws, "other/main.py")
	}
	// no match yet: the loop runs the pattern itself, and the first file a call adds there
	ws := lineProject(t, ".claude/settings.json", claudeHook(`for f in hooks.d/*.sh; do sh "$f"; done`))
	write(t, filepath.Join(ws, "hooks.d", "README"), "hooks\n")
	loadRefused(t, ws, "hooks.d/b.sh", "starts")
	ws = lineProject(t, ".claude/settings.json", claudeHook(`for f in src/*.ts other/*.py; do npx prettier --check "$f"; done; `+
		`for f in $(git diff --name-only); do ruff check "$f"; done`))
	for _, p := range []string{"src/index.ts", "other/main.py", "server/main.py"} {
		loadApplied(t, ws, p)
	}
}

// A runtime's script or a cd target that is a command's output (atk49a F6): `python3 "$(ls
// server/m*.py)"`, `F=$(ls server/m*.py); python3 "$F"`, `sh "$(ls hooks.d/*.sh | head -1)"`,
// `cd "$(git rev-parse --show-toplevel || pwd)"/server` and a loop over `$(ls …)` running each
// were not followed (dash and bash run server/main.py); the started-script reader fails closed on
// them, and now the config line's does. Red with mutant workspace-config-shell-unplaced. A
// command's output a linter is given keeps every file writable.
func TestCommitConfigLineUnplaced(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`python3 "$(ls server/m*.py)"`,
		`F=$(ls server/m*.py); python3 "$F"`,
		`sh "$(ls hooks.d/*.sh | head -1)"`,
		`cd "$(git rev-parse --show-toplevel || pwd)"/server && python3 main.py`,
		`for f in $(ls server/*.py); do python3 "$f"; done`,
		`. "$(ls tools/*.sh)"`,
	} {
		t.Log(cmd)
		loadRefused(t, lineProject(t, ".claude/settings.json", claudeHook(cmd)), "other/main.py", "a command's output")
	}
	ws := lineProject(t, ".claude/settings.json", claudeHook(`for f in $(git diff --name-only); do prettier --check "$f"; done; `+
		`npx eslint $(git diff --name-only -- '*.ts')`))
	loadApplied(t, ws, "server/main.py")
	loadApplied(t, ws, "src/index.ts")
}

// A computed export or an eval may set any name (atk49a F7): after `export $(cat .env)` (.env
// SRV=server) `cd "${SRV:-app}" && python3 main.py` was read as cd app, and so in a `sh -c` it
// runs; dash and bash run server/main.py. The config line now reads it as the started-script
// reader does (atk43 F6, atk44a F1): no default taken after it, a runtime's script or a cd target
// it leaves unresolved fails closed. Red with mutant workspace-config-shell-opaque. A file the
// line sources and the check reads sets what it reads.
func TestCommitConfigLineOpaque(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`export $(cat .env); cd "${SRV:-app}" && python3 main.py`,
		`export $(cat .env); sh -c 'cd "${SRV:-app}" && python3 main.py'`,
		`eval "$(cat .env)"; python3 "${SRV:-app}/main.py"`,
	} {
		t.Log(cmd)
		ws := lineProject(t, ".claude/settings.json", claudeHook(cmd))
		write(t, filepath.Join(ws, ".env"), "SRV=server\n")
		loadRefused(t, ws, "other/main.py", "a command's output or a value the check cannot resolve")
	}
	ws := lineProject(t, ".claude/settings.json", claudeHook(`. ./tools/env.sh; cd "${SRV:-app}" && python3 main.py`))
	write(t, filepath.Join(ws, "tools", "env.sh"), "export SRV=server\n")
	serverRun(t, ws)
}

// Assignments the variable reader did not see (atk49a F8): `: "${SRV:=server}"` (and `${SRV=…}`)
// assigns its default, bash's `SRV+=ver` and `export SRV+=ver` append; `sh -c 'cd "$SRV" &&
// python3 main.py'` after them ran server/main.py, writable. Red with mutants
// workspace-shell-assign-default and workspace-shell-append.
func TestCommitConfigLineAssignForms(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`: "${SRV:=server}"; export SRV; sh -c 'cd "$SRV" && python3 main.py'`,
		`: ${SRV=server}; cd "$SRV" && python3 main.py`,
		`bash -c 'SRV=ser; export SRV+=ver; sh -c "cd \"\$SRV\" && python3 main.py"'`,
		`SRV=ser; SRV+=ver; cd "$SRV" && python3 main.py`,
	} {
		t.Log(cmd)
		serverRun(t, lineProject(t, ".claude/settings.json", claudeHook(cmd)))
	}
}

// A started script's nested code is given its positional parameters (atk49a F3): tools/run.sh's
// `sh -c 'cd "$1" && python3 main.py' _ server` and `bash -c 'cd "$0" && python3 main.py'
// server` left server/main.py writable (dash and bash run it); the script's own `cd "$1"` fails
// closed. The parameters are now bound, and a cd the code cannot place fails closed as the
// script's own. Red with mutants workspace-config-shell-positional and
// workspace-config-shell-started-cd.
func TestCommitStartedScriptNestedParams(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, script := range []string{
		"sh -c 'cd \"$1\" && python3 main.py' _ server\n",
		"bash -c 'cd \"$0\" && python3 main.py' server\n",
		"sh -c 'cd \"$(dirname \"$1\")\" && python3 main.py' _ server/main.py\n",
	} {
		t.Log(script)
		ws := lineProject(t, ".claude/settings.json", claudeHook("sh tools/run.sh"))
		write(t, filepath.Join(ws, "tools", "run.sh"), script)
		serverRun(t, ws)
	}
	ws := lineProject(t, ".claude/settings.json", claudeHook("sh tools/run.sh"))
	write(t, filepath.Join(ws, "tools", "run.sh"), "sh -c 'cd \"$SRV_DIR\" && python3 main.py'\n")
	loadRefused(t, ws, "other/main.py", "changes directory")
}
