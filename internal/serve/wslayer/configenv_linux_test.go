package wslayer

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A nested code starts from what its shell exports (atk48a F4): `SRV=server sh -c 'cd "$SRV" &&
// python3 main.py'` and `export SRV=server; sh <<'EOF'` with `cd "$SRV" && python3 main.py` in
// the body left server/main.py writable, as did the class's other forms below (each run here
// with dash, bash for export -n, and GNU env). Red with mutants workspace-config-shell-child-env
// (the prefix, env -S, the exported heredoc), workspace-config-shell-env-words (env N=v, env
// -i), workspace-config-shell-raw-codes (a single-quoted code the parent's variables were
// expanded in), workspace-config-shell-exports (set -a, export -n, unset), workspace-config-
// shell-source (a sourced file's export) and workspace-config-shell-loaders (PYTHONPATH=server).
// An ordinary hook's variables keep the sources writable.
func TestCommitConfigLineChildEnv(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ file, text string }{
		{".claude/settings.json", claudeHook(`SRV=server sh -c 'cd "$SRV" && python3 main.py'`)},
		{".claude/settings.json", claudeHook("export SRV=server; sh <<'EOF'\ncd \"$SRV\" && python3 main.py\nEOF")},
		{".claude/settings.json", claudeHook(`env -S 'SRV=server sh -c "cd \$SRV && python3 main.py"'`)},
		{".claude/settings.json", claudeHook(`SRV=server flock /tmp/l -c 'cd "$SRV" && python3 main.py'`)},
		{".husky/pre-commit", "export SRV=server\nsh <<'EOF'\ncd \"$SRV\" && python3 main.py\nEOF\n"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    srv:\n      run: SRV=server sh -c 'cd \"$SRV\" && python3 main.py'\n"},
		{".claude/settings.json", claudeHook(`env SRV=server sh -c 'cd "$SRV" && python3 main.py'`)},
		{".claude/settings.json", claudeHook(`export SRV=app; env -i SRV=server sh -c 'cd "${SRV:-x}" && python3 main.py'`)},
		{".claude/settings.json", claudeHook(`SRV=app; sh -c 'cd "${SRV:-server}" && python3 main.py'`)},
		{".claude/settings.json", claudeHook(`SRV=app; SRV=server sh -c 'cd "$SRV" && python3 main.py'`)},
		{".claude/settings.json", claudeHook("set -a; SRV=server; sh <<'EOF'\ncd \"$SRV\" && python3 main.py\nEOF")},
		{".claude/settings.json", claudeHook("set -o allexport; SRV=server; bash <<'EOF'\ncd \"$SRV\" && python3 main.py\nEOF")},
		{".claude/settings.json", claudeHook(`export SRV=app; export -n SRV; sh -c 'cd "${SRV:-server}" && python3 main.py'`)},
		{".claude/settings.json", claudeHook(`export SRV=app; unset SRV; sh -c 'cd "${SRV:-server}" && python3 main.py'`)},
		{".claude/settings.json", claudeHook(`export SRV=app; env -u SRV sh -c 'cd "${SRV:-server}" && python3 main.py'`)},
		{".claude/settings.json", claudeHook(". ./tools/env.sh; sh <<'EOF'\ncd \"$SRV\" && python3 main.py\nEOF")},
		{".claude/settings.json", claudeHook(`PYTHONPATH=server python3 -m main`)},
		{".claude/settings.json", claudeHook(`export PYTHONPATH=server; sh -c 'python3 -m main'`)},
	} {
		ws := lineProject(t, k.file, k.text)
		write(t, filepath.Join(ws, "tools", "env.sh"), "export SRV=server\n")
		serverRun(t, ws)
	}
	ws := lineProject(t, ".claude/settings.json", claudeHook(`export NODE_ENV=production CI=1; NODE_OPTIONS=--max-old-space-size=4096 sh -c 'npm test && npx tsc --noEmit'`))
	for _, p := range []string{"src/index.ts", "server/main.py", "app/main.py"} {
		loadApplied(t, ws, p)
	}
}

// find's actions and GNU parallel run a command on files no word names (atk48a F8): `find server
// -name main.py -execdir python3 {} \;` (GNU find runs python3 ./main.py from server/) left
// server/main.py writable, as did -exec, -exec … +, -okdir, a `sh -c` given {}, an -execdir
// runtime of its own, and parallel's pattern item. A start at the root fails closed on every
// change. Red with mutant workspace-config-find-exec; watchexec --workdir with mutant
// workspace-config-wrapper-dirs. A find that deletes, formats or lints keeps the files writable.
func TestCommitConfigLineFindExec(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, cmd := range []string{
		`find server -name main.py -execdir python3 {} \;`,
		`find server -name main.py -exec python3 {} \;`,
		`find server -name '*.py' -exec python3 {} +`,
		`find server -name main.py -okdir python3 {} \;`,
		`find -L server -name main.py -exec sh -c 'cd "$(dirname "$1")" && python3 main.py' _ {} \;`,
		`find server -maxdepth 1 -name main.py -execdir sh -c 'python3 main.py' \;`,
		`parallel python3 ::: server/*.py`,
		`watchexec --workdir server -- python3 main.py`,
	} {
		t.Log(cmd)
		serverRun(t, lineProject(t, ".claude/settings.json", claudeHook(cmd)))
	}
	ws := lineProject(t, ".claude/settings.json", claudeHook(`find . -name main.py -execdir python3 {} \;`))
	loadRefused(t, ws, "other/main.py", "find's -execdir")
	ws = lineProject(t, ".claude/settings.json", claudeHook(`find . -name '*.pyc' -delete; find . -name '*.ts' -exec npx prettier --write {} +; `+
		`find . -type f -name '*.sh' -exec chmod 755 {} \;`))
	for _, p := range []string{"src/index.ts", "server/main.py", "app/main.py"} {
		loadApplied(t, ws, p)
	}
}

// A nested code's copy of what its parent exports is charged to the config lines' statement
// bound: 1,100 names exported and 16,000 `sh -c x` after them held a commit 2.3 s (1.1 GB
// allocated) copying 9 million names. Red with mutant workspace-config-shell-child-charge.
func TestCommitConfigLineChildEnvCharged(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var b strings.Builder
	b.WriteString("export")
	for i := range 1100 {
		fmt.Fprintf(&b, " A%d=v", i)
	}
	b.WriteString(strings.Repeat("; sh -c x", 16000))
	ws := lineProject(t, ".claude/settings.json", claudeHook(b.String()))
	before := childCopied.Load()
	loadRefused(t, ws, "docs/a.md", "16384 statements")
	if n := childCopied.Load() - before; n > 1_000_000 {
		t.Errorf("%d exported names copied into nested codes, want the statement bound to stop it sooner", n)
	}
}
