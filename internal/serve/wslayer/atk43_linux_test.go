package wslayer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Claude Code expands ${NAME:-default} in a .mcp.json's command, args and env before it starts
// the server: with NAME unset the default runs. It was read as $NAME, a value from outside the
// workspace, and the default never judged (atk43 F2). Red with mutant
// workspace-config-client-defaults.
func TestCommitFollowsClientDefaults(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, c := range []struct {
		server map[string]any
		file   string
	}{
		{map[string]any{"command": "python3", "args": []string{"-m", "tool"}, "env": map[string]string{"PYTHONPATH": "${PROJ:-.}/lib"}}, "lib/tool.py"},
		{map[string]any{"command": "python3", "args": []string{"-m", "tool"}, "env": map[string]string{"PYTHONPATH": "${PROJ:-lib}"}}, "lib/tool.py"},
		{map[string]any{"command": "node", "args": []string{"srv/main.js"}, "env": map[string]string{"NODE_OPTIONS": "--require ${D:-.}/hooks/x.js"}}, "hooks/x.js"},
		{map[string]any{"command": "python3", "args": []string{"${D:-.}/srv/main.py"}}, "srv/main.py"},
		{map[string]any{"command": "python3", "args": []string{"-c", "${CODE:-import srv.main}"}}, "srv/main.py"},
	} {
		ws := t.TempDir()
		for _, f := range []string{"lib/tool.py", "srv/__init__.py", "srv/main.py", "srv/main.js", "hooks/x.js"} {
			write(t, filepath.Join(ws, f), "X = 1\n")
		}
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": c.server}})
		write(t, filepath.Join(ws, ".mcp.json"), string(b))
		loadRefused(t, ws, c.file, startsIt)
		loadApplied(t, ws, "docs/a.md")
	}
}

// A run.sh's ${APP_DIR:-app} was taken for app whenever the reader saw no assignment of
// APP_DIR, but a sourced file, `set -a; source .env` or an eval sets names it does not see: bash
// ran lib/main.py, writable (atk43 F6). Such a program's defaults are not known to be what runs.
// Red with mutant workspace-shell-default-opaque.
func TestCommitShellDefaultsAfterSource(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	home := os.Getenv("HOME")
	write(t, filepath.Join(home, "app.env"), "export APP_DIR=lib\n") // outside the workspace: no protected file shows it set
	for _, head := range []string{". scripts/env.sh\n", "set -a; source .env; set +a\n", "eval \"$(cat scripts/env.sh)\"\n", ". \"$HOME/app.env\"\n", "export $(cat \"$HOME/app.env\" | xargs)\n"} {
		ws := runShProject(t, head+"exec python3 \"${APP_DIR:-app}/main.py\"\n")
		write(t, filepath.Join(ws, "scripts", "env.sh"), "export APP_DIR=lib\n")
		write(t, filepath.Join(ws, ".env"), "APP_DIR=lib\n")
		write(t, filepath.Join(ws, "lib", "main.py"), "X = 1\n")
		if applied, why, _ := commitOne(t, ws, "lib/main.py", "evil\n"); applied {
			t.Errorf("%q: lib/main.py, which the sourced APP_DIR makes the program, was applied (%q)", head, why)
		}
	}
}

// A << in arithmetic ($(( 1<<2 )), (( m = 1 << 3 ))) was taken for a heredoc whose delimiter
// never comes: the rest of the script was its body, and the inline code after it was not read
// (atk43 F7). Red with mutant workspace-heredoc-arith.
func TestCommitHeredocNotArithmetic(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, head := range []string{"N=$((1<<2))\n", "(( M = 1 << 3 ))\n"} {
		ws := runShProject(t, head+"exec python3 -c 'import app.main'\n")
		loadRefused(t, ws, "app/main.py", startsIt)
		loadApplied(t, ws, "notes.md")
	}
}

// An import in a one-line compound statement (`if 1: import srv.main`, `try: import …`) was not
// read: the import regexp was anchored at a line's start (atk43 F5). Red with mutant
// workspace-follow-py-compound.
func TestCommitFollowsCompoundImports(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, code := range []string{"if 1: import srv.main", "try: import srv.main\nexcept ImportError: pass", "while 1: import srv.main; break"} {
		ws := t.TempDir()
		b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "python3", "args": []string{"-c", code}}}})
		write(t, filepath.Join(ws, ".mcp.json"), string(b))
		write(t, filepath.Join(ws, "srv", "__init__.py"), "")
		write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
		loadRefused(t, ws, "srv/main.py", startsIt)
		loadApplied(t, ws, "docs/a.md")
	}
}

// A config's strings were read as a token stream: YAML's anchors, aliases and tags, a double-
// quoted string's escaped line break, and a JSONC block comment's strings gave -c other code
// than the client's parser does (atk43 F1). A JSONC comment is skipped, and a YAML config is
// decoded by a YAML parser (TestCommitConfigValuesParsed). Red with mutant
// workspace-config-yaml-unmodeled (the JSONC case).
func TestCommitConfigStringsAsParsed(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, c := range []struct{ file, text string }{
		{".continue/mcpServers/s.yaml", "mcpServers:\n  - name: s\n    command: python3\n    args:\n      - -c\n      - !!str import srv.main\n"},
		{".continue/mcpServers/s.yaml", "mcpServers:\n  - name: s\n    command: python3\n    args:\n      - -c\n      - &c import srv.main\n"},
		{".continue/mcpServers/s.yaml", "code: &c import srv.main\nmcpServers:\n  - name: s\n    command: python3\n    args: [-c, *c]\n"},
		{".continue/mcpServers/s.yaml", "mcpServers:\n  - name: s\n    command: python3\n    args: [\"-c\", \"import srv.\\\n      main\"]\n"},
		{".vscode/mcp.json", "{\"servers\": {\"s\": {\"command\": \"python3\", \"args\": [\"-c\", /* \"print(1)\" */ \"import srv.main\"]}}}\n"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, c.file), c.text)
		write(t, filepath.Join(ws, "srv", "__init__.py"), "")
		write(t, filepath.Join(ws, "srv", "main.py"), "X = 1\n")
		if applied, why, _ := commitOne(t, ws, "srv/main.py", "evil\n"); applied {
			t.Errorf("%s %q: srv/main.py, which -c imports, was applied (%q)", c.file, c.text, why)
		}
	}
	// an ordinary lefthook config: a glob and a comment with a star are no aliases
	ws := t.TempDir()
	write(t, filepath.Join(ws, "lefthook.yml"), "# *the* hooks\npre-commit:\n  commands:\n    lint:\n      glob: \"*.js\"\n      run: npx eslint {staged_files}\n")
	loadApplied(t, ws, "docs/a.md")
}

// The shell reader took the first word it did not know for the script, so the -c/-e code or
// heredoc after it was never read: a wrapper with values (timeout 30, poetry run, uv run --with
// httpx), an option taking a value it did not know (bash -O extglob, node --disable-warning X),
// a script named /dev/stdin (atk43 F3). Every runtime the statement names is read, a code
// option after the script's word too. Red with mutant workspace-inline-first-word.
func TestCommitFollowsInlineAfterWrappers(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, line := range []string{
		"exec timeout 30 python3 -c 'import app.main'",
		"exec poetry run python -c 'import app.main'",
		"exec uv run --with httpx python -c 'import app.main'",
		"bash -O extglob -c \"python3 -c 'import app.main'\"",
		"bash --rcfile /dev/null -c \"python3 -c 'import app.main'\"",
		"exec node --disable-warning ExperimentalWarning -e \"require('./app/main.js')\"",
		"exec node --unhandled-rejections strict -e \"require('./app/main.js')\"",
		"bash /dev/stdin <<'EOF'\npython3 -c 'import app.main'\nEOF",
	} {
		ws := runShProject(t, line+"\n")
		file := "app/main.py"
		if strings.Contains(line, "node") {
			file = "app/main.js"
		}
		if applied, why, _ := commitOne(t, ws, file, "evil\n"); applied {
			t.Errorf("%q: %s, which the inline code loads, was applied (%q)", line, file, why)
		}
		loadApplied(t, ws, "notes.md")
	}
}

// runShProject is a workspace whose .mcp.json starts scripts/run.sh: a cd to the workspace's
// root, then body; app/ holds main.py (a package) and main.js.
func runShProject(t *testing.T, body string) string {
	t.Helper()
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"]}}}`)
	write(t, filepath.Join(ws, "scripts", "run.sh"), "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n"+body)
	write(t, filepath.Join(ws, "app", "__init__.py"), "")
	write(t, filepath.Join(ws, "app", "main.py"), "X = 1\n")
	write(t, filepath.Join(ws, "app", "main.js"), "module.exports = 1;\n")
	return ws
}
