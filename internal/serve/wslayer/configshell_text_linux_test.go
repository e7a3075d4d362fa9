package wslayer

import (
	"path/filepath"
	"strconv"
	"testing"
)

// A config's shell text read as sh reads it (atk47a F1): a `(` glued to a word in a comment
// (`# see lint-staged(1)`) or a heredoc's body was taken for sh's syntax error and nothing after
// it was read, and an apostrophe in a heredoc's body (`doesn't`) opened a quote that swallowed
// the rest, so `cd server && python3 main.py` after it left server/main.py (and helper.py)
// writable; dash and bash run every form (atk47a verify_lines.out, verify_reader.out). Red with
// mutants workspace-config-shell-comments (the comment forms) and
// workspace-config-shell-heredocs (the heredoc forms); a body fed to sh is still read as code.
func TestCommitConfigLineCommentsHeredocs(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	mcp := func(code string) string {
		return `{"mcpServers": {"s": {"command": "sh", "args": ["-c", ` + strconv.Quote(code) + `]}}}`
	}
	for _, k := range []struct{ file, text, target string }{
		{".husky/pre-commit", "# see lint-staged(1)\ncd server && python3 main.py\n", "server/main.py"},
		{".husky/pre-commit", "#!/bin/sh\n# format(py) before commit\ncd server\npython3 main.py\n", "server/helper.py"},
		{".husky/pre-commit", "cat <<EOF\nrunning format(s)\nEOF\ncd server && python3 main.py\n", "server/main.py"},
		{".husky/commit-msg", "cat <<EOF\nThe message doesn't follow Conventional Commits\nEOF\ncd server && python3 main.py\n", "server/helper.py"},
		{".husky/pre-commit", "cat <<-'EOF' >&2\n\tdon't (ever) skip\n\tEOF\ncd server && python3 main.py\n", "server/main.py"},
		{".claude/settings.json", claudeHook("cd server && python3 main.py # fmt(py)"), "server/main.py"},
		{".claude/settings.json", claudeHook("python3 scripts/fmt.py;true # see fmt(1)"), "scripts/fmt.py"},
		{".claude/settings.json", claudeHook(`"$CLAUDE_PROJECT_DIR/my tools/fmt.sh" # see fmt(1)`), "my tools/fmt.sh"},
		{".claude/settings.json", claudeHook("cat <<EOF\ndon't forget\nEOF\ncd server && python3 main.py"), "server/main.py"},
		{".claude/settings.json", claudeHook("echo ${X-a(b)}; cd server && python3 main.py"), "server/main.py"},
		{".claude/settings.json", claudeHook("[[ $X =~ ^a(b)$ ]] || true\ncd server && python3 main.py"), "server/main.py"},
		{".claude/settings.json", claudeHook("sh <<'EOF'\ncd server && python3 main.py\nEOF"), "server/main.py"},
		{".husky/pre-commit", "SRV=server\nsh <<EOF\ncd $SRV && python3 main.py\nEOF\n", "server/helper.py"},
		{".claude/settings.json", claudeHook("cat <<EOF\ndon't\nEOF\npython3 -c 'import server.helper' # x(y)"), "server/helper.py"},
		{"lefthook.yml", "pre-commit:\n  commands:\n    srv:\n      run: cd server && python3 main.py # see fmt(1)\n", "server/main.py"},
		{".mcp.json", mcp("cat <<EOF\nit's\nEOF\ncd server; python3 main.py # see fmt(1)"), "server/main.py"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, filepath.FromSlash(k.file)), k.text)
		write(t, filepath.Join(ws, "server", "main.py"), "import helper\n")
		write(t, filepath.Join(ws, "server", "helper.py"), "X = 1\n")
		write(t, filepath.Join(ws, "scripts", "fmt.py"), "print('fmt')\n")
		write(t, filepath.Join(ws, "my tools", "fmt.sh"), "#!/bin/sh\necho fmt\n")
		write(t, filepath.Join(ws, "other", "main.py"), "print(1)\n")
		loadRefused(t, ws, k.target, "starts")
		loadApplied(t, ws, "other/main.py")
		loadApplied(t, ws, "docs/a.md")
	}
}

// An ordinary project's hook texts with comments, heredocs and a permission pattern keep its
// other files writable: what sh does not run (a comment's words, a heredoc's prose, a line after
// a real syntax error) names no program.
func TestCommitConfigLineCommentsOrdinary(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".husky", "pre-commit"), "#!/bin/sh\n# run lint-staged(1) first\nnpx lint-staged\n"+
		"cat <<EOF\nDon't commit secrets (see the docs)\nEOF\n")
	write(t, filepath.Join(ws, ".claude", "settings.json"), `{"permissions": {"allow": ["Read(src/**)", "Bash(npm run test:*)"]},`+
		` "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "npx prettier --write . # see prettier(1)"}]}]}}`)
	write(t, filepath.Join(ws, "src", "index.ts"), "export {}\n")
	write(t, filepath.Join(ws, "src", "secret.ts"), "export {}\n")
	for _, p := range []string{"src/index.ts", "src/secret.ts", "src/new.ts", "docs/a.md", "README.md"} {
		loadApplied(t, ws, p)
	}
}

// A husky script's $0 is the script (husky v9 runs `sh -e .husky/<hook>` from the project's root;
// git runs it by that path before v9): `$(dirname "$0")/..` is the root, and was taken for the
// root's parent, so `cd "$(dirname "$0")/../server" && python3 main.py` and `python3
// "$(dirname "$0")/../server/main.py"` left server/main.py writable (atk47a F6; sh -e and bash
// -e run both: verify_reader.out). Red with mutant workspace-config-husky-self. A hook's `sh -c`
// string keeps its $0 (the shell's name: dirname is the working directory).
func TestCommitHuskySelfDir(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ file, text, target string }{
		{".husky/pre-commit", `cd "$(dirname "$0")/../server" && python3 main.py` + "\n", "server/helper.py"},
		{".husky/pre-commit", `python3 "$(dirname "$0")/../server/main.py"` + "\n", "server/main.py"},
		{".husky/pre-commit", `python3 "${0%/*}/../server/main.py"` + "\n", "server/main.py"},
		{".husky/pre-commit", `cd "$(dirname -- "$0")/.."` + "\ncd server\npython3 main.py\n", "server/main.py"},
		{".claude/settings.json", claudeHook(`cd "$(dirname "$0")/server" && python3 main.py`), "server/main.py"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, filepath.FromSlash(k.file)), k.text)
		write(t, filepath.Join(ws, "server", "main.py"), "import helper\n")
		write(t, filepath.Join(ws, "server", "helper.py"), "X = 1\n")
		write(t, filepath.Join(ws, "other", "main.py"), "print(1)\n")
		loadRefused(t, ws, k.target, "starts")
		loadApplied(t, ws, "other/main.py")
	}
	// husky v8's own hook: it sources .husky/_/husky.sh, and the project's sources stay writable
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".husky", "pre-commit"), "#!/usr/bin/env sh\n. \"$(dirname -- \"$0\")/_/husky.sh\"\n\nnpx lint-staged\n")
	write(t, filepath.Join(ws, ".husky", "_", "husky.sh"), "#!/usr/bin/env sh\nexport readonly husky_skip_init=1\n")
	write(t, filepath.Join(ws, "src", "index.ts"), "export {}\n")
	for _, p := range []string{"src/index.ts", "src/new.ts", "README.md"} {
		loadApplied(t, ws, p)
	}
}
