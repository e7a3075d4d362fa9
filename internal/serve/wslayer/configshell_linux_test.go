package wslayer

import (
	"path/filepath"
	"strconv"
	"testing"
)

// A hook's command line is run by sh: it was split at blanks, so a glued operator
// (`x.py;true`, `x.py>/dev/null`, `x.py<in`), a quoted or escaped blank, the project spelled
// `${CLAUDE_PROJECT_DIR%/}`, `${…:?}`, `$(pwd)` or backquoted, a glob, bash's `{a,b}`, `$'…'`
// and `~+` named no file and the hook's own script was the call's to rewrite (atk46a F1; each
// form run by dash and bash: atk46a verify_hook.out). Red with mutant
// workspace-config-shell-lines; the forms also with -params, -redirects and -globs.
func TestCommitHookShellLine(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ cmd, file string }{
		{`"${CLAUDE_PROJECT_DIR%/}"/scripts/fmt.sh`, "scripts/fmt.sh"},
		{`"${CLAUDE_PROJECT_DIR:?}"/scripts/fmt.sh`, "scripts/fmt.sh"},
		{`"$(pwd)"/scripts/fmt.sh`, "scripts/fmt.sh"},
		{"`pwd`/scripts/fmt.sh", "scripts/fmt.sh"},
		{`"$CLAUDE_PROJECT_DIR/my tools/fmt.sh"`, "my tools/fmt.sh"},
		{`python3 "my tools/fmt.py"`, "my tools/fmt.py"},
		{`python3 my\ tools/fmt.py`, "my tools/fmt.py"},
		{`python3 scripts/fmt.py<docs/a.md`, "scripts/fmt.py"},
		{`python3 scripts/fmt.py>/dev/null`, "scripts/fmt.py"},
		{`python3 scripts/fmt.py;true`, "scripts/fmt.py"},
		{`python3 scripts/fmt.py&&true`, "scripts/fmt.py"},
		{`python3 scrip?s/fmt.py`, "scripts/fmt.py"},
		{`python3 scripts/fmt.p[y]`, "scripts/fmt.py"},
		{`python3 $'scripts/fmt.py'`, "scripts/fmt.py"},
		{`python3 {scripts,x}/fmt.py`, "scripts/fmt.py"},
		{`python3 ~+/scripts/fmt.py`, "scripts/fmt.py"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(k.cmd))
		write(t, filepath.Join(ws, "scripts", "fmt.sh"), "#!/bin/bash\necho fmt\n")
		write(t, filepath.Join(ws, "scripts", "fmt.py"), "print('fmt')\n")
		write(t, filepath.Join(ws, "my tools", "fmt.sh"), "#!/bin/bash\necho fmt\n")
		write(t, filepath.Join(ws, "my tools", "fmt.py"), "print('fmt')\n")
		write(t, filepath.Join(ws, "src", "a.py"), "x = 1\n")
		loadRefused(t, ws, k.file, `".claude/settings.json\" starts`)
		loadApplied(t, ws, "docs/a.md") // the line's redirection's file is read, not run
	}
}

// An ordinary Claude Code project's settings keep its sources writable: a permission's pattern
// (`Read(src/**)`, a syntax error to sh, which runs no line from it on) and prose name no
// program; a hook's glob over what it formats is an argument, not a program.
func TestCommitHookShellLineOrdinary(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".claude", "settings.json"), `{"permissions": {"allow": ["Read(src/**)", "Edit(docs/**)",`+
		` "Bash(python3 src/*.py)"]}, "hooks": {"PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command",`+
		` "command": "jq -r '.tool_input.file_path' | xargs npx prettier --write"}, {"type": "command", "command": `+
		strconv.Quote(`cd "$CLAUDE_PROJECT_DIR" && npx eslint src/*.ts && "$CLAUDE_PROJECT_DIR"/scripts/check.sh`)+`}]}]}}`)
	write(t, filepath.Join(ws, "scripts", "check.sh"), "#!/bin/sh\nnpx eslint .\n")
	write(t, filepath.Join(ws, "src", "index.ts"), "export {}\n")
	write(t, filepath.Join(ws, "docs", "index.md"), "x\n")
	loadRefused(t, ws, "scripts/check.sh", `".claude/settings.json\" starts`)
	for _, p := range []string{"src/index.ts", "docs/index.md", "src/new.ts", "README.md"} {
		loadApplied(t, ws, p)
	}
}

// A directory change in a config's command line is followed (atk46a F2): a hook's `cd server
// && python3 main.py`, `(cd …)`, a server's `sh -c 'cd server; …'` (and one in a hook's line),
// lefthook's `run:` and a .husky script ran server/main.py, and what it imports, both writable
// (dash and bash run them: atk46a verify_cd.out). Red with mutant workspace-config-shell-cd
// (the sh -c forms with workspace-config-shell-lines too); the other directory stays writable.
func TestCommitConfigLineCd(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	mcp := func(args ...string) string {
		q := `{"mcpServers": {"s": {"command": "sh", "args": [`
		for i, a := range args {
			if i > 0 {
				q += ", "
			}
			q += strconv.Quote(a)
		}
		return q + `]}}}`
	}
	for _, k := range []struct{ file, text string }{
		{".claude/settings.json", claudeHook(`cd server && python3 main.py`)},
		{".claude/settings.json", claudeHook(`cd "$CLAUDE_PROJECT_DIR"/server && python3 main.py`)},
		{".claude/settings.json", claudeHook(`(cd server && python3 main.py)`)},
		{".claude/settings.json", claudeHook(`sh -c 'cd server; python3 main.py'`)},
		{".claude/settings.json", claudeHook(`bash -ec "cd server && exec python3 main.py"`)},
		{".mcp.json", mcp("-c", "cd server; python3 main.py")},
		{"lefthook.yml", "pre-commit:\n  commands:\n    srv:\n      run: cd server && python3 main.py\n"},
		{".husky/pre-commit", "cd server\npython3 main.py\n"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, filepath.FromSlash(k.file)), k.text)
		write(t, filepath.Join(ws, "server", "main.py"), "import helper\n")
		write(t, filepath.Join(ws, "server", "helper.py"), "X = 1\n")
		write(t, filepath.Join(ws, "other", "main.py"), "print(1)\n")
		loadRefused(t, ws, "server/main.py", "starts")
		loadRefused(t, ws, "server/helper.py", "starts")
		loadApplied(t, ws, "other/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}

// GNU env's chdir option read by its getopt (atk46a F2): `--chdir DIR`, `--chdir=DIR`, a prefix
// of the long name, a cluster ending in C (`-iC DIR`, `-iCDIR`) moved where python3 main.py is
// taken from, and only `-C` was a dirFlag (env 9.1 runs each: atk46a verify_chdir.out). Red with
// mutant workspace-env-chdir; -u's value `C` is not a chdir.
func TestCommitEnvChdir(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, args := range []string{`["--chdir", "server", "python3", "main.py"]`, `["--chdir=server", "python3", "main.py"]`,
		`["--ch=server", "python3", "main.py"]`, `["-iC", "server", "python3", "main.py"]`, `["-iCserver", "python3", "main.py"]`} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "env", "args": `+args+`}}}`)
		write(t, filepath.Join(ws, "server", "main.py"), "import helper\n")
		write(t, filepath.Join(ws, "server", "helper.py"), "X = 1\n")
		loadRefused(t, ws, "server/main.py", startsIt)
		loadRefused(t, ws, "server/helper.py", startsIt)
		loadApplied(t, ws, "docs/a.md")
	}
	for _, w := range [][]string{{"env", "-uC", "server"}, {"env", "-i", "python3"}, {"python3", "--chdir", "x"}} {
		if d := envChdirs(w); len(d) != 0 {
			t.Errorf("envChdirs(%q) = %q, want none", w, d)
		}
	}
}

// An .envrc's `${PWD%/}` is the directory direnv runs it from (the shell reader's value of a
// suffix removed): what it sources is protected, no more (it failed closed before, the
// expansion not modelled). Red with mutant workspace-config-shell-params.
func TestCommitEnvrcParamTrim(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "sub", ".envrc"), "source \"${PWD%/}/tools/x.sh\"\n")
	commitJudges(t, ws, []string{"sub/tools/x.sh"}, []string{"notes.txt", "sub/tools/evil"})
}

// The command lines read from configs are bounded (maxConfigStmts, maxConfigLines): 65,536
// distinct `cd x && a bN;c` strings (1.3 MiB) held a commit 17 s more than the blank split;
// past the bound what the rest starts is not judged and every change is refused, a config
// under it judged. Red with mutant workspace-config-shell-bound.
func TestCommitConfigLinesBound(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	// the bytes between strings: the statements are counted in a string too since atk47a F7
	// (TestCommitConfigLineStmtsInString), which alone would catch the mutant here
	old := maxConfigLines
	maxConfigLines = 64
	t.Cleanup(func() { maxConfigLines = old })
	for _, k := range []struct {
		n       int
		applied bool
	}{{2, true}, {12, false}} {
		ws := t.TempDir()
		args := `"x"`
		for i := 0; i < k.n; i++ {
			args += `, "cd x && a b` + strconv.Itoa(i) + `;c"`
		}
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "sh", "args": [`+args+`]}}}`)
		if applied, why, sum := commitOne(t, ws, "docs/a.md", "x\n"); applied != k.applied {
			t.Errorf("%d command lines: docs/a.md applied %v (%q), want %v: %s", k.n, applied, why, k.applied, sum)
		}
	}
}
