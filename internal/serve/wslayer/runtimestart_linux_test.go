package wslayer

import (
	"strings"
	"testing"
	"time"
)

// A runtime word was read as a runtime started wherever it stood in a statement, and one with
// no code and no script as reading a pipe, so `which node`, `command -v python3`, `echo …
// python3` in a protected script or hook refused every change of the project (atk44a F3). A
// runtime is started by the statement's command or through wrappers (exec, timeout 30, sudo -u
// x, uv run --with y); a pipe into one so started still fails closed. Red with mutant
// workspace-inline-runtime-anywhere.
func TestCommitRuntimeArgumentsAreData(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, line := range []string{
		"command -v python3 >/dev/null || { echo 'python3 is needed' >&2; exit 1; }",
		"if ! which node >/dev/null 2>&1; then echo need node; exit 1; fi",
		"echo Starting the server with python3",
		"PY=$(command -v python3 || command -v python)",
		"hash node 2>/dev/null || exit 1",
		"pgrep -f node || true",
		"test -x \"$(command -v bash)\"",
		"type python3 >/dev/null",
		"sudo apt-get install -y python3 nodejs",
		"uv python install python3.12",
		"ps aux | grep -q node",
	} {
		ws := runShProject(t, line+"\nexec python3 app/main.py\n")
		loadApplied(t, ws, "notes.md")
		hook := `{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "` + strings.ReplaceAll(strings.ReplaceAll(line, `\`, `\\`), `"`, `\"`) + `"}]}]}}`
		ws = t.TempDir()
		write(t, ws+"/.claude/settings.json", hook)
		loadApplied(t, ws, "notes.md")
	}
	for _, line := range []string{ // a pipe into a runtime a wrapper starts
		"echo 'import app.main' | python3 -",
		"echo 'import app.main' | timeout 30 python3 -",
		"echo 'import app.main' | exec nice -n 10 python3",
		"echo 'import app.main' | sudo -u app python3 -",
		"echo 'import app.main' | uv run --with httpx python -",
		"echo 'import app.main' | command python3 -",
		"if true; then echo 'import app.main' | env A=1 python3 -; fi",
	} {
		ws := runShProject(t, line+"\n")
		if applied, why, _ := commitOne(t, ws, "notes.md", "evil\n"); applied {
			t.Errorf("%q: a pipe into a runtime the statement starts was not failed closed (%q)", line, why)
		}
	}
}

// runtimeInline read, for each runtime word of a statement, every later word (a 120 KB line of
// `sh` words: 40 s under the workspace lock, atk44a F4): each runtime's command line is read up
// to the next runtime word. Red with mutant workspace-inline-runtime-window.
func TestStmtInlineLinear(t *testing.T) {
	words := strings.Fields("echo " + strings.Repeat("sh ", 200_000) + "x")
	finishes(t, 20*time.Second, "stmtInline of 200,000 runtime words", func() { stmtInline(words, nil) })
	for _, c := range []struct{ line, code string }{
		{"bash -c node", "node"},
		{"node --disable-warning X -e 1", "1"},
		{"uv run --python python3.12 python -c 2", "2"},
		{"bash -O extglob -c 3", "3"},
	} {
		progs, _ := stmtInline(strings.Fields(c.line), nil)
		if len(progs) == 0 || progs[len(progs)-1].code != c.code {
			t.Errorf("%q: read %v, want the code %q", c.line, progs, c.code)
		}
	}
}

// A runtime's standard input from a process substitution, an unresolved or globbed file, or a
// process substitution as a shell's script was an empty program: nothing judged (atk44a F11).
// It fails closed as a pipe does; a file named literally is a word, judged as one. Red with
// mutant workspace-inline-stdin-unseen.
func TestCommitInlineStdinUnseen(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, line := range []string{
		"exec python3 - < <(echo 'import app.main')",
		"exec python3 - < <(printf '%s\\n' 'import app.main')",
		"exec node - < <(echo \"require('./app/main.js')\")",
		"exec bash <(echo \"python3 -c 'import app.main'\")",
		"exec bash /dev/stdin < <(echo \"python3 -c 'import app.main'\")",
		"BOOT=$(ls tools/*.py | head -n1)\nexec python3 - < \"$BOOT\"",
		"exec python3 - < tools/*.py",
		"exec python3 0< <(echo 'import app.main')",
	} {
		ws := runShProject(t, line+"\n")
		write(t, ws+"/tools/boot.py", "import app.main\n")
		if applied, why, _ := commitOne(t, ws, "app/main.py", "evil\n"); applied {
			t.Errorf("%q: app/main.py, which the program on standard input may import, was applied (%q)", line, why)
		}
	}
	for _, line := range []string{ // ordinary: a file named literally, data on stdin, another fd
		"exec python3 - < tools/boot.py",
		"exec python3 app/main.py < data.txt",
		"diff <(sort a.txt) <(sort b.txt)\nexec python3 app/main.py",
		"exec python3 app/main.py 3< <(echo x)",
	} {
		ws := runShProject(t, line+"\n")
		write(t, ws+"/tools/boot.py", "import json\n")
		loadApplied(t, ws, "notes.md")
	}
}

// The arithmetic check, where << is a shift, worked per line and did not know $[ ]: `N=$((⏎
// 1<<2⏎))` and `N=$[1<<2]` started a heredoc whose delimiter (2) never came, so the rest of
// the script was its body, unread (atk44a F7). The depth is carried over lines, $[ ] counted,
// and a heredoc whose delimiter never comes fails closed. Red with mutant
// workspace-heredoc-arith-lines.
func TestCommitHeredocArithOverLines(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, pre := range []string{
		"N=$((\n  1<<2\n))",
		"N=$[1<<2]",
		"N=$[ a[1] << 2 ]",
		"((\n  N = 1<<2\n))",
		"cat <<'EOF'\nnever closed",
	} {
		ws := runShProject(t, pre+"\nexec python3 -c 'import app.main'\n")
		if applied, why, _ := commitOne(t, ws, "app/main.py", "evil\n"); applied {
			t.Errorf("%q then python3 -c 'import app.main': app/main.py was applied (%q)", pre, why)
		}
	}
	// ordinary: arithmetic (over lines), then a heredoc that is data: nothing fails closed (red
	// with mutant workspace-heredoc-arith too: a shift read as a heredoc never delimited)
	for _, body := range []string{
		"N=$((\n  1<<2\n))\nM=$[N+1]\ncat > /tmp/x <<'EOF'\npython3 -\nEOF\nexec python3 app/main.py\n",
		"N=$((1<<2))\n(( M = 1 << 3 ))\nexec python3 app/main.py\n",
	} {
		ws := runShProject(t, body)
		loadApplied(t, ws, "notes.md")
	}
}

// Python's statements were found a line at a time and `-m`'s value was a module only: `import
// os, \⏎ app.main` and `python3 -m timeit 'import app.main'` (-s 'import app.main') ran what
// the reader never read (atk44a F9). A backslash joins lines; timeit's words are code. Red with
// mutants workspace-py-continuation and workspace-py-timeit-code.
func TestCommitPyContinuationAndTimeit(t *testing.T) {
	runInlineCases(t, []inlineCase{
		{"-c import os, \\⏎ app.main", mcpJSON("python3", `"-c", "import os, \\\n  app.main"`), "app/main.py", false},
		{"run.sh: -c import os, \\⏎ app.main", runSh("exec python3 -c 'import os, \\\n  app.main'"), "app/main.py", false},
		{"-m timeit STMT", runSh("exec python3 -m timeit -n 1 'import app.main'"), "app/main.py", false},
		{"-mtimeit -s SETUP", runSh("python3 -mtimeit -s 'import app.main' pass"), "app/main.py", false},
		{"-m timeit --setup=", runSh("python3 -m timeit '--setup=import app.main' pass"), "app/main.py", false},
		// ordinary: another module, a continuation importing the standard library
		{"-c import os, \\⏎ json", mcpJSON("python3", `"-c", "import os, \\\n  json"`), "app/main.py", true},
		{"-m timeit of the standard library", runSh("python3 -m timeit -s 'import json' 'json.dumps(1)'"), "app/main.py", true},
		{"-m http.server", runSh("exec python3 -m http.server 8000"), "app/main.py", true},
	})
}

// runSh is a project whose .mcp.json starts scripts/run.sh: a cd to the root, then line.
func runSh(line string) map[string]string {
	return map[string]string{".mcp.json": `{"mcpServers": {"s": {"command": "bash", "args": ["scripts/run.sh"]}}}`,
		"scripts/run.sh": "#!/bin/bash\ncd \"$(dirname \"$0\")/..\"\n" + line + "\n"}
}
