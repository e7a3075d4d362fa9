package wslayer

import (
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// lefthookProject is lineProject's workspace (server/main.py imports server/helper.py) with the
// files of files beside it.
func lefthookProject(t *testing.T, files map[string]string) string {
	t.Helper()
	ws := lineProject(t, "docs/a.md", "a\n")
	for p, s := range files {
		write(t, filepath.Join(ws, filepath.FromSlash(p)), s)
	}
	return ws
}

// lefthookServerRuns: each lefthook.yml of cfgs (with the files of extra) runs server/main.py.
func lefthookServerRuns(t *testing.T, extra map[string]string, cfgs ...string) {
	t.Helper()
	for _, cfg := range cfgs {
		files := map[string]string{"lefthook.yml": cfg}
		for p, s := range extra {
			files[p] = s
		}
		serverRun(t, lefthookProject(t, files))
	}
}

// lefthook's script files are the host's (atk48a F1): a call wrote .lefthook/pre-commit/lint.sh,
// .lefthook-local/…, a new script there with no config yet, a config's source_dir's script, and
// what a script runs (`cd server && python3 main.py`, a runner's program) stayed writable;
// lefthook runs them as `RUNNER <source_dir>/<hook>/<name>` at the next git commit. Red with
// mutants protect-roundatk48a (the directories by name) and workspace-lefthook-scripts (the
// scripts read).
func TestCommitLefthookScripts(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, rel := range []string{".lefthook/pre-commit/lint.sh", ".lefthook-local/pre-commit/x.sh", "sub/.lefthook/pre-push/y.sh"} {
		loadRefused(t, lefthookProject(t, nil), rel, "protected")
	}
	for _, k := range []map[string]string{
		{"lefthook.yml": "pre-commit:\n  scripts:\n    \"lint.sh\":\n      runner: bash\n", ".lefthook/pre-commit/lint.sh": "cd server && python3 main.py\n"},
		{"lefthook-local.yml": "pre-commit:\n  scripts:\n    \"x.sh\":\n      runner: sh\n", ".lefthook-local/pre-commit/x.sh": "python3 server/main.py\n"},
		{"lefthook.yml": "pre-commit:\n  jobs:\n    - script: lint.sh\n      runner: bash\n", ".lefthook/pre-commit/lint.sh": "cd server\npython3 main.py\n"},
		{"lefthook.yml": "pre-commit:\n  scripts:\n    \"check.py\":\n      runner: python3\n", ".lefthook/pre-commit/check.py": "import runpy; runpy.run_path('server/main.py')\n"},
		// the script named but not there yet, a call's to make: its directory is protected
		{"lefthook.yml": "source_dir: tools/hooks/\npre-commit:\n  scripts:\n    \"lint.sh\":\n      runner: bash\n", "tools/hooks/pre-commit/lint.sh": "python3 server/main.py\n"},
		// the local config's script in the main config's source_dir
		{"lefthook.yml": "source_dir: tools/hooks\n", "lefthook-local.yml": "pre-push:\n  scripts:\n    \"p.sh\":\n      runner: bash\n", "tools/hooks/pre-push/p.sh": "python3 server/main.py\n"},
		// a file of a hook's script directory no entry names (lefthook before 1.x ran each)
		{"lefthook.yml": "pre-commit:\n  commands:\n    fmt:\n      run: gofmt -l .\n", ".lefthook/pre-commit/old": "#!/bin/sh\npython3 server/main.py\n"},
	} {
		ws := lefthookProject(t, k)
		serverRun(t, ws)
		loadApplied(t, ws, "docs/a.md")
	}
	ws := lefthookProject(t, map[string]string{"lefthook.yml": "source_dir: tools/hooks/\npre-commit:\n  scripts:\n    \"lint.sh\":\n      runner: bash\n"})
	loadRefused(t, ws, "tools/hooks/pre-commit/new.sh", "starts")
	loadApplied(t, ws, "tools/other.sh")
}

// A relative sys.path entry is the working directory's (atk48a F1): `sys.path.insert(0,
// 'server'); import helper` in a script a hook runs from the root loaded server/helper.py,
// writable; the program's directory alone was protected. Red with mutant workspace-py-syspath-cwd.
func TestCommitPySysPathFromCwd(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []map[string]string{
		{"lefthook.yml": "pre-commit:\n  scripts:\n    \"check.py\":\n      runner: python3\n", ".lefthook/pre-commit/check.py": "import sys; sys.path.insert(0, 'server'); import helper\n"},
		{".claude/settings.json": claudeHook("python3 tools/check.py"), "tools/check.py": "import sys\nsys.path.append(\"server\")\nimport helper\n"},
	} {
		ws := lefthookProject(t, k)
		loadRefused(t, ws, "server/helper.py", "starts")
		loadApplied(t, ws, "other/main.py")
	}
}

// lefthook's root is a command's or a job's working directory (atk48a F2): `root: server/` with
// `run: python3 main.py` (the docs' monorepo form), a job's, a group's for its jobs, and
// `root: client/` with `node scripts/check.js` requiring ./util left what they run writable.
// Red with mutant workspace-lefthook-root.
func TestCommitLefthookRoot(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	lefthookServerRuns(t, map[string]string{".lefthook/pre-commit/s.sh": "python3 main.py\n"},
		"pre-commit:\n  commands:\n    srv:\n      root: \"server/\"\n      glob: \"*.py\"\n      run: python3 main.py {staged_files}\n",
		"pre-commit:\n  commands:\n    srv:\n      root: server\n      run: python3 -m main\n",
		"pre-commit:\n  jobs:\n    - name: srv\n      root: server/\n      run: python3 main.py\n",
		"pre-commit:\n  parallel: true\n  jobs:\n    - name: g\n      root: server/\n      group:\n        piped: true\n        jobs:\n          - run: python3 main.py\n",
		"pre-commit:\n  jobs:\n    - group:\n        root: server\n        jobs:\n          - run: python3 main.py\n",
		"pre-commit:\n  jobs:\n    - script: s.sh\n      runner: bash\n      root: server\n", // .lefthook/pre-commit/s.sh below
		"pre-commit:\n  commands:\n    srv:\n      root: /server\n      run: python3 main.py\n")
	ws := lefthookProject(t, map[string]string{"client/package.json": `{"name":"client"}`, "client/scripts/check.js": "require('./util')\n",
		"client/scripts/util.js": "1\n", "lefthook.yml": "pre-commit:\n  commands:\n    check:\n      root: \"client/\"\n      glob: \"*.{js,ts}\"\n      run: node scripts/check.js {staged_files}\n"})
	loadRefused(t, ws, "client/scripts/util.js", "starts")
	loadApplied(t, ws, "other/main.py")
}

// lefthook's env and templates change what a run runs: `env: {SRV: server}` with `cd $SRV`, a
// group's env for its jobs, `templates: {srv: server}` with `cd {srv}` (lefthook replaces it
// before sh runs the line) left server/main.py writable. Red with mutant workspace-lefthook-vars.
func TestCommitLefthookVars(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	lefthookServerRuns(t, nil,
		"pre-commit:\n  commands:\n    srv:\n      env:\n        SRV: server\n      run: cd \"$SRV\" && python3 main.py\n",
		"pre-commit:\n  jobs:\n    - env:\n        SRV: server\n      group:\n        jobs:\n          - run: python3 $SRV/main.py\n",
		"templates:\n  srv: server\npre-commit:\n  jobs:\n    - run: cd {srv} && python3 main.py\n",
		"templates:\n  py: python3 server/main.py\npre-commit:\n  commands:\n    a:\n      run: \"{py}\"\n")
}

// What lefthook merges or sources is the host's too: a file `extends` names (a path, a glob's
// directory, a glob's name prefix at the root, a file extended from an extended one) and its
// hooks' runs, and the `rc` file the installed hook sources. A call rewrote them, or added a
// file a glob matches, and lefthook ran its hooks. Red with mutant workspace-lefthook-loads.
func TestCommitLefthookLoads(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ext := "pre-commit:\n  commands:\n    srv:\n      root: server\n      run: python3 main.py\n"
	for _, k := range []map[string]string{
		{"lefthook.yml": "extends:\n  - ci/lefthook-extra.yml\n", "ci/lefthook-extra.yml": ext},
		{"lefthook.yml": "extends:\n  - ci/*.yml\n", "ci/a.yml": ext},
		{"lefthook.yml": "extends: [ci/a.yml]\n", "ci/a.yml": "extends: [ci/b.yml]\n", "ci/b.yml": ext},
		{"lefthook.yml": "rc: .hookrc\npre-commit:\n  commands:\n    a:\n      run: echo\n", ".hookrc": "python3 server/main.py\n"},
	} {
		serverRun(t, lefthookProject(t, k))
	}
	ws := lefthookProject(t, map[string]string{"lefthook.yml": "extends:\n  - ci/lefthook-extra.yml\n  - hooks.d/*.yml\n  - extra-*.yml\n", "ci/lefthook-extra.yml": "{}\n"})
	for _, rel := range []string{"ci/lefthook-extra.yml", "hooks.d/new.yml", "extra-new.yml"} {
		loadRefused(t, ws, rel, "lefthook")
	}
	loadApplied(t, ws, "ci/other.yml")
	loadApplied(t, ws, "other.yml")
}

// lefthook reads its config in every format and its local config in each (atk48a F1's class):
// a call wrote lefthook-local.yaml, .lefthook.toml or .config/lefthook.json (red with mutant
// protect-roundatk48a), and what those the host has run was not read (red with mutant
// workspace-lefthook-formats).
func TestCommitLefthookFormats(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, rel := range []string{"lefthook-local.yaml", ".lefthook-local.json", "lefthook.toml", ".lefthook.jsonc", ".config/lefthook.yml", ".config/lefthook-local.toml"} {
		loadRefused(t, lefthookProject(t, nil), rel, "protected")
	}
	for _, k := range []map[string]string{
		{"lefthook.toml": "[pre-commit.commands.srv]\nroot = \"server\"\nrun = \"python3 main.py\"\n"},
		{"lefthook.toml": "[[pre-commit.jobs]]\nroot = \"server\"\nrun = \"python3 main.py\"\n"},
		{"lefthook-local.json": `{"pre-commit": {"jobs": [{"root": "server", "run": "python3 main.py"}]}}`},
		{".lefthook.jsonc": "{\n  // the server\n  \"pre-commit\": {\"commands\": {\"s\": {\"root\": \"server\", \"run\": \"python3 main.py\"}}}\n}\n"},
		{".config/lefthook.yaml": "pre-commit:\n  jobs:\n    - run: python3 main.py\n      root: server\n"},
	} {
		serverRun(t, lefthookProject(t, k))
	}
}

// An ordinary Go project with lefthook's jobs, a group, a root, a script and templates keeps
// its sources writable: only what the hooks run is protected.
func TestCommitLefthookProjectUsable(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	cfg := "templates:\n  pkgs: ./...\npre-commit:\n  parallel: true\n  jobs:\n" +
		"    - name: gofmt\n      glob: \"*.go\"\n      run: gofmt -l {staged_files}\n" +
		"    - name: vet\n      run: go vet {pkgs}\n" +
		"    - name: lint\n      run: golangci-lint run --new-from-rev HEAD\n" +
		"    - name: web\n      root: web/\n      glob: \"*.ts\"\n      run: npx eslint {staged_files}\n" +
		"    - script: check-mod.sh\n      runner: bash\n" +
		"pre-push:\n  commands:\n    test:\n      env:\n        CGO_ENABLED: \"0\"\n      run: go test ./...\n"
	ws := lefthookProject(t, map[string]string{"lefthook.yml": cfg, ".lefthook/pre-commit/check-mod.sh": "#!/bin/sh\ngo mod tidy -diff\n",
		"go.mod": "module example.com/x\n", "main.go": "package main\nfunc main() {}\n", "internal/x/x.go": "package x\n",
		"cmd/tool/main.go": "package main\nfunc main() {}\n", "web/src/app.ts": "export {}\n", "README.md": "x\n"})
	for _, rel := range []string{"main.go", "internal/x/x.go", "cmd/tool/main.go", "internal/y/new.go", "web/src/app.ts", "README.md", "go.mod"} {
		loadApplied(t, ws, rel)
	}
	loadRefused(t, ws, ".lefthook/pre-commit/check-mod.sh", "protected")
}

// lefthook merges its configs key by key (atk49a F2): an extended file's `root: server/` or
// `env: {PYTHONPATH: server}` for the main config's command of the same name, a job merged by
// its `name`, a file an extends glob matches and a local config's root applied to the main
// config's `run: python3 main.py`, and lefthook (1.13.6, `lefthook dump`) ran server/main.py;
// each file was read apart. Red with mutant workspace-lefthook-merge.
func TestCommitLefthookMerged(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	run := "pre-commit:\n  commands:\n    lint:\n      run: python3 main.py\n"
	root := "pre-commit:\n  commands:\n    lint:\n      root: server/\n"
	for _, k := range []map[string]string{
		{"lefthook.yml": "extends:\n  - common.yml\n" + run, "common.yml": root},
		{"lefthook.yml": "extends:\n  - common.yml\npre-commit:\n  commands:\n    lint:\n      run: python3 -m main\n",
			"common.yml": "pre-commit:\n  commands:\n    lint:\n      env:\n        PYTHONPATH: server\n"},
		{"lefthook.yml": "extends:\n  - common.yml\npre-commit:\n  jobs:\n    - name: lint\n      run: python3 main.py\n",
			"common.yml": "pre-commit:\n  jobs:\n    - name: lint\n      root: server/\n"},
		{"lefthook.yml": "extends:\n  - hooks/*.yml\n" + run, "hooks/a.yml": root},
		{"lefthook.yml": "extends:\n  - common.yml\n" + root, "common.yml": run},
		{"lefthook.yml": run, "lefthook-local.yml": "pre-commit:\n  commands:\n    lint:\n      root: server\n"},
		{"lefthook.yml": run, "lefthook-local.yml": "pre-commit:\n  commands:\n    lint:\n      run: cd server && {cmd}\n"},
		{"lefthook.yml": "pre-commit:\n  jobs:\n    - name: lint\n      group:\n        jobs:\n          - name: py\n            run: python3 main.py\n",
			"lefthook-local.yml": "pre-commit:\n  jobs:\n    - name: lint\n      group:\n        jobs:\n          - name: py\n            root: server\n"},
	} {
		serverRun(t, lefthookProject(t, k))
	}
	// lefthook's order: an extended file's root over the main one's, the local config's over both
	serverRun(t, lefthookProject(t, map[string]string{"lefthook.yml": "extends:\n  - common.yml\npre-commit:\n  commands:\n    lint:\n      root: app/\n      run: python3 main.py\n",
		"common.yml": root}))
	serverRun(t, lefthookProject(t, map[string]string{"lefthook.yml": "extends:\n  - common.yml\n" + run,
		"common.yml": "pre-commit:\n  commands:\n    lint:\n      root: app/\n", "lefthook-local.yml": root}))
}

// lefthookMerge merges as lefthook's loader does: maps key by key, lists replaced, jobs by
// name, a run's {cmd} the run it overrides, and changes neither map.
func TestLefthookMerge(t *testing.T) {
	dest := map[string]any{"h": map[string]any{"commands": map[string]any{"a": map[string]any{"run": "x", "env": map[string]any{"A": "1"}}},
		"jobs": []any{map[string]any{"name": "j", "run": "y"}, map[string]any{"run": "z"}}, "setup": []any{"s1"}, "tags": []any{"t1"}}}
	src := map[string]any{"h": map[string]any{"commands": map[string]any{"a": map[string]any{"run": "cd d && {cmd}", "env": map[string]any{"B": "2"}}},
		"jobs": []any{map[string]any{"name": "j", "root": "r"}, map[string]any{"run": "w"}}, "setup": []any{"s2"}, "tags": []any{"t2"}}}
	got := lefthookMerge(dest, src)
	want := map[string]any{"h": map[string]any{"commands": map[string]any{"a": map[string]any{"run": "cd d && x", "env": map[string]any{"A": "1", "B": "2"}}},
		"jobs":  []any{map[string]any{"name": "j", "run": "y", "root": "r"}, map[string]any{"run": "z"}, map[string]any{"run": "w"}},
		"setup": []any{"s1", "s2"}, "tags": []any{"t2"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged\n%v\nwant\n%v", got, want)
	}
	if _, ok := lefthookMap(lefthookMap(lefthookMap(dest["h"])["commands"])["a"])["env"].(map[string]any)["B"]; ok {
		t.Error("the merge changed dest")
	}
}

// A template's value is replaced in a run only within the lines' bound (atk49a F4): 20,000
// marks of a 60,000-byte value in a 120 KB lefthook.yml built 1.2 GB (3.1 s) before the bound
// was charged. Each line's length is now known before it is built: the commit fails closed at
// the bound, having built nothing past it. Red with mutant workspace-lefthook-template-bound.
func TestCommitLefthookTemplateBound(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	cfg := "templates:\n  a: " + strings.Repeat("x", 60000) + "\npre-commit:\n  commands:\n    lint:\n      run: \"echo " + strings.Repeat("{a}", 20000) + "\"\n"
	ws := lefthookProject(t, map[string]string{"lefthook.yml": cfg})
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	loadRefused(t, ws, "docs/a.md", "command lines in configs of more than")
	runtime.ReadMemStats(&m1)
	if a := m1.TotalAlloc - m0.TotalAlloc; a > 128<<20 {
		t.Errorf("the commit allocated %d MiB: the lines were built before the bound", a>>20)
	}
	// within the bound, a template is replaced as before
	ws = lefthookProject(t, map[string]string{"lefthook.yml": "templates:\n  a: server\npre-commit:\n  commands:\n    lint:\n      run: cd {a} && python3 main.py\n"})
	serverRun(t, ws)
}

// lefthook's monorepo form (`root: DIR/`) left every file below DIR read-only whatever the run
// (atk49a F5): the config's words reader took the root's value for a program named by its
// directory (red with mutant workspace-lefthook-root-words), and a reader's `.` there (ruff
// check ., gofmt -l .) for a directory an unknown program runs (red with mutant
// workspace-follow-dir-readers). What a run in a root runs stays protected (TestCommitLefthookRoot).
func TestCommitLefthookRootUsable(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	for _, k := range []struct{ root, run, rel string }{
		{"pyapp/", "echo hi", "pyapp/mod.py"},
		{"api/", "echo hi", "api/util.go"},
		{"api", "go vet ./...", "api/main.go"},
		{"pyapp/", "ruff check .", "pyapp/mod.py"},
		{"api/", "gofmt -l .", "api/main.go"},
	} {
		ws := lefthookProject(t, map[string]string{"pyapp/mod.py": "x = 1\n", "api/main.go": "package main\n",
			"lefthook.yml": "pre-commit:\n  commands:\n    x:\n      root: " + k.root + "\n      run: " + k.run + "\n"})
		loadApplied(t, ws, k.rel)
	}
	// an unknown program's `.` there, and a runner's, still protect
	for _, run := range []string{"pytest .", "./check.sh .", "python3 ."} {
		ws := lefthookProject(t, map[string]string{"pyapp/__main__.py": "x = 1\n", "pyapp/check.sh": "echo\n",
			"lefthook.yml": "pre-commit:\n  commands:\n    x:\n      root: pyapp/\n      run: " + run + "\n"})
		loadRefused(t, ws, "pyapp/__main__.py", "starts")
	}
}
