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

// An app server's module named without a colon (`gunicorn srv.main`, `hypercorn srv.main`,
// `dramatiq srv.main`, `arq srv.main.WorkerSettings`, `rq worker -c srv.main`, gunicorn's `-k
// srv.worker.W`) was no spec: srv/main.py was applied (atk42 F8's leftover). A dotted word
// among an app server's arguments is read as a module, narrowly. Red with mutant
// workspace-follow-app-tool.
func TestCommitFollowsAppModules(t *testing.T) {
	files := map[string]string{"srv/__init__.py": "", "srv/main.py": "app = None\n", "srv/worker.py": "W = None\n", "docs/notes.md": "n\n"}
	var cases []followCase
	for _, k := range []struct{ cmd, args, target string }{
		{"gunicorn", `"srv.main"`, "srv/main.py"},
		{"gunicorn", `"-w", "4", "-b", "0.0.0.0:8000", "srv.main"`, "srv/main.py"},
		{"hypercorn", `"srv.main"`, "srv/main.py"},
		{"dramatiq", `"srv.main", "srv.worker"`, "srv/worker.py"},
		{"arq", `"srv.main.WorkerSettings"`, "srv/main.py"},
		{"rq", `"worker", "-c", "srv.main"`, "srv/main.py"},
		{"gunicorn", `"-k", "srv.worker.W", "other:app"`, "srv/worker.py"},
		{"uv", `"run", "gunicorn", "srv.main"`, "srv/main.py"},
	} {
		name := k.cmd + " " + k.args
		cases = append(cases, followCase{name: name, files: files, command: k.cmd, args: k.args, target: k.target},
			followCase{name: name + ", an ordinary change", files: files, command: k.cmd, args: k.args, target: "docs/notes.md", applied: true})
	}
	cases = append(cases, followCase{name: "a dotted word of another program stays the call's", files: files, command: "python3",
		args: `"tools/x.py", "srv.main"`, target: "srv/main.py", applied: true})
	runFollowCases(t, cases)
	// a script's other words near the app server's name: a file's name is no module
	t.Setenv("HOME", t.TempDir())
	ws := runShProject(t, "pip install -r requirements.txt\nexec gunicorn --log-config log.yaml srv.main\n")
	write(t, filepath.Join(ws, "srv", "main.py"), "app = None\n")
	loadRefused(t, ws, "srv/main.py", startsIt)
	loadApplied(t, ws, "requirements.in")
	loadApplied(t, ws, "log.json")
}

// uvicorn's --app-dir, gunicorn's --chdir and --pythonpath place the module elsewhere: `uvicorn
// --app-dir srv api:app` imports srv/api.py, which was applied (atk42 F8's leftover). Red with
// mutant workspace-follow-app-dir.
func TestCommitFollowsAppDirs(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, line := range []string{
		"exec uvicorn --app-dir srv api:app",
		"exec uvicorn --app-dir=srv api:app",
		"exec gunicorn --chdir srv api:app",
		"exec gunicorn --pythonpath lib,srv api:app",
	} {
		ws := runShProject(t, line+"\n")
		write(t, filepath.Join(ws, "srv", "api.py"), "app = None\n")
		write(t, filepath.Join(ws, "srv", "notes.md"), "n\n")
		if applied, why, _ := commitOne(t, ws, "srv/api.py", "evil\n"); applied {
			t.Errorf("%q: srv/api.py, the app it imports, was applied (%q)", line, why)
		}
		loadApplied(t, ws, "notes.md")
	}
}
