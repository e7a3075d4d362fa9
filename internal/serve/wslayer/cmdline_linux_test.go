package wslayer

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// A wrapper that hands a shell a command line as one word (env -S "…", flock f -c "…", su -c,
// script -c, watch "…") ran inline code the reader never saw: only a config's strings were read
// as command lines, not a script's words (atk42 F1's leftover, the wrappers' class). Each such
// word is read as a command line; a word only mentioning a runtime fails nothing closed. Red
// with mutant workspace-inline-command-words.
func TestCommitFollowsCommandStrings(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, line := range []string{
		"exec env -S \"python3 -c 'import app.main'\"",
		"exec env -S\"python3 -c 'import app.main'\"",
		"exec env -iS\"python3 -c 'import app.main'\"",
		"exec env --split-string=\"python3 -c 'import app.main'\"",
		"exec flock /tmp/lk -c \"python3 -c 'import app.main'\"",
		"exec flock -n /tmp/lk --command \"python3 -c 'import app.main'\"",
		"exec script -qc \"python3 -c 'import app.main'\" /dev/null",
		"exec su -c \"python3 -c 'import app.main'\" app",
		"exec watch -n 5 \"python3 -c 'import app.main'\"",
		// a wrapper with values before the runtime: every runtime the statement names is read
		"exec nice -n 10 python3 -c 'import app.main'",
		"exec ionice -c 3 chrt -f 1 taskset -c 0 stdbuf -oL timeout -s KILL 5 python3 -c 'import app.main'",
		"exec env -i -u X nohup setsid python3 -c 'import app.main'",
		"exec sudo -u app xvfb-run -a dotenv run -- python3 -c 'import app.main'",
	} {
		ws := runShProject(t, line+"\n")
		if applied, why, _ := commitOne(t, ws, "app/main.py", "evil\n"); applied {
			t.Errorf("%q: app/main.py, which the inline code imports, was applied (%q)", line, why)
		}
		loadApplied(t, ws, "notes.md")
	}
	for _, line := range []string{"echo \"needs python3\"", "echo \"run: python3 -m pip install -r requirements.txt\""} {
		ws := runShProject(t, line+"\n")
		loadApplied(t, ws, "app/main.py")
		loadApplied(t, ws, "notes.md")
	}
}

// `deno eval CODE` ran its code's imports unread: deno was no runtime the reader knew (atk42
// F1's leftover). eval's words are read as JavaScript, from a script and a config (whose "args"
// may come before "command"). Red with mutant workspace-inline-deno-eval.
func TestCommitFollowsDenoEval(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, line := range []string{"exec deno eval \"import('./lib')\"", "exec deno -q eval --ext=js \"import('./lib')\""} {
		ws := runShProject(t, line+"\n")
		write(t, filepath.Join(ws, "lib", "index.js"), "export {};\n")
		if applied, why, _ := commitOne(t, ws, "lib/index.js", "evil\n"); applied {
			t.Errorf("%q: lib/index.js, which the code imports, was applied (%q)", line, why)
		}
		loadApplied(t, ws, "notes.md")
	}
	ws := t.TempDir()
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"command": "deno", "args": []string{"eval", "import('./lib')"}}}})
	write(t, filepath.Join(ws, ".mcp.json"), string(b))
	write(t, filepath.Join(ws, "lib", "index.js"), "export {};\n")
	loadRefused(t, ws, "lib/index.js", startsIt)
	loadApplied(t, ws, "docs/a.md")
}
