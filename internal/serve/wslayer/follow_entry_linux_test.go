package wslayer

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// linkedWorkspace is a workspace the user names through a link above it (/home/u -> /data/u, as
// many homes are): ws as named, real its path with the links followed.
func linkedWorkspace(t *testing.T) (ws, real string) {
	t.Helper()
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "data", "proj"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "data"), filepath.Join(base, "home")); err != nil {
		t.Fatal(err)
	}
	ws = filepath.Join(base, "home", "proj")
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	return ws, real
}

// followCase is a workspace's files, the config's server, and a file the host's program loads
// (refused) or does not (applied).
type followCase struct {
	name    string
	files   map[string]string
	links   map[string]string // at -> to
	command string
	args    string // JSON, the array's inside; REAL is the workspace's real path
	target  string
	applied bool // the target is the call's to write
}

func runFollowCases(t *testing.T, cases []followCase) {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	for _, k := range cases {
		ws, real := linkedWorkspace(t)
		for p, s := range k.files {
			write(t, filepath.Join(ws, filepath.FromSlash(p)), s)
		}
		for at, to := range k.links {
			symlink(t, to, filepath.Join(ws, filepath.FromSlash(at)))
		}
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "`+k.command+`", "args": [`+
			strings.ReplaceAll(k.args, "REAL", real)+`]}}}`)
		applied, why, sum := commitOne(t, ws, k.target, "import os; os.system('id')\n")
		if applied != k.applied {
			t.Errorf("%s: %s applied %v (%q), want %v: %s", k.name, k.target, applied, why, k.applied, sum)
		}
	}
}

// A program named through a file link runs from the link's target's directory (atk41 F8):
// Python puts the script's directory with its links followed on sys.path, node resolves its
// main module's links, and a program reads files beside its os.path.realpath(__file__). The
// target's package is protected whole as the link's directory is. Red when the follower judges
// the program from the link's directory (mutant workspace-follow-resolved-dir).
func TestCommitFollowsProgramThroughFileLink(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "python3 bin/server.py -> ../srv/main.py, import helper", files: map[string]string{"srv/main.py": "import helper\n"},
			links: map[string]string{"bin/server.py": "../srv/main.py"}, command: "python3", args: `"bin/server.py"`, target: "srv/helper.py"},
		{name: "pickle beside the real file", files: map[string]string{"srv/main.py": "import pickle, os\nd = os.path.dirname(os.path.realpath(__file__))\n" +
			"m = pickle.load(open(os.path.join(d, 'model.pkl'), 'rb'))\n"},
			links: map[string]string{"bin/server.py": "../srv/main.py"}, command: "python3", args: `"bin/server.py"`, target: "srv/model.pkl"},
		{name: "node bin/server.js -> ../srv/index.js", files: map[string]string{"srv/index.js": "require('./helper.js')\n"},
			links: map[string]string{"bin/server.js": "../srv/index.js"}, command: "node", args: `"bin/server.js"`, target: "srv/helper.js"},
		{name: "the link's own directory", files: map[string]string{"srv/main.py": "import helper\n"},
			links: map[string]string{"bin/server.py": "../srv/main.py"}, command: "python3", args: `"bin/server.py"`, target: "bin/other.py"},
		{name: "the target itself", files: map[string]string{"srv/main.py": "import helper\n"},
			links: map[string]string{"bin/server.py": "../srv/main.py"}, command: "python3", args: `"bin/server.py"`, target: "srv/main.py"},
		{name: "another directory stays the call's", files: map[string]string{"srv/main.py": "import helper\n", "docs/a.md": "a\n"},
			links: map[string]string{"bin/server.py": "../srv/main.py"}, command: "python3", args: `"bin/server.py"`, target: "docs/a.md", applied: true},
	})
}

// A config may name the program by the workspace's real path (a directory above the workspace
// is a link: /home -> /var/home): the same place as the workspace's spelling, so the same
// package is protected whole (atk41 F9), a directory named so is followed, and a --directory
// so spelled is where the words are taken from. Red when only the workspace's own spelling is
// taken (mutant workspace-follow-other-spelling).
func TestCommitFollowsProgramByWorkspaceRealPath(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "python3 REAL/srv/main.py (pickle beside it)", files: map[string]string{"srv/main.py": "import pickle, os\nd = os.path.dirname(__file__)\n" +
			"m = pickle.load(open(os.path.join(d, 'model.pkl'), 'rb'))\n"}, command: "python3", args: `"REAL/srv/main.py"`, target: "srv/model.pkl"},
		{name: "python3 REAL/srv (its __main__.py)", files: map[string]string{"srv/__main__.py": "import helper\n"},
			command: "python3", args: `"REAL/srv"`, target: "srv/helper.py"},
		{name: "uv --directory REAL/srv run main.py", files: map[string]string{"srv/main.py": "import helper\n"},
			command: "uv", args: `"--directory", "REAL/srv", "run", "main.py"`, target: "srv/helper.py"},
		{name: "another directory stays the call's", files: map[string]string{"srv/main.py": "import helper\n", "docs/a.md": "a\n"},
			command: "python3", args: `"REAL/srv/main.py"`, target: "docs/a.md", applied: true},
	})
}

// A program started by its directory or its project runs the entry its runtime takes (atk41
// F11): node srv (srv/index.js), node srv/ (package.json's main), python3 srv (__main__.py),
// npx ./srv (package.json's bin), uvx --from . (pyproject.toml's scripts); that entry's
// package is protected whole; a directory a config names to a program that is not known to
// run one is protected whole. Red when a directory word is skipped (mutant
// workspace-follow-dir-entry).
func TestCommitFollowsProgramNamedByDirectory(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "node srv", files: map[string]string{"srv/index.js": "require('./helper.js')\n"}, command: "node", args: `"srv"`, target: "srv/helper.js"},
		{name: "node srv/ (main)", files: map[string]string{"srv/package.json": `{"main": "lib/main.js"}`, "srv/lib/main.js": "require('./helper.js')\n"},
			command: "node", args: `"srv/"`, target: "srv/lib/helper.js"},
		{name: "python3 srv", files: map[string]string{"srv/__main__.py": "import helper\n"}, command: "python3", args: `"srv"`, target: "srv/helper.py"},
		{name: "npx -y ./srv (bin)", files: map[string]string{"srv/package.json": `{"name": "x", "bin": {"x": "cli.js"}}`, "srv/cli.js": "require('./helper.js')\n"},
			command: "npx", args: `"-y", "./srv"`, target: "srv/helper.js"},
		{name: "uvx --from . mcp-x", files: map[string]string{"pyproject.toml": "[project]\nname = 'x'\n[project.scripts]\nmcp-x = \"srv.main:main\"\n",
			"srv/main.py": "import json\n", "srv/__init__.py": ""}, command: "uvx", args: `"--from", ".", "mcp-x"`, target: "srv/main.py"},
		{name: "java -cp lib (a runner not known)", files: map[string]string{"lib/a.class": "x"}, command: "java", args: `"-cp", "lib", "Main"`, target: "lib/b.class"},
		{name: "npm run start: node srv in package.json's scripts", files: map[string]string{"srv/index.js": "require('./helper.js')\n",
			"package.json": `{"scripts": {"start": "node srv"}, "files": ["src", "srv"]}`, "src/index.ts": "export {};\n"},
			command: "npm", args: `"run", "start"`, target: "srv/helper.js"},
		{name: "npm run start: package.json's \"files\" stay the call's", files: map[string]string{"srv/index.js": "require('./helper.js')\n",
			"package.json": `{"scripts": {"start": "node srv"}, "files": ["src", "srv"]}`, "src/index.ts": "export {};\n"},
			command: "npm", args: `"run", "start"`, target: "src/index.ts", applied: true},
		{name: "node srv: another directory stays the call's", files: map[string]string{"srv/index.js": "require('./helper.js')\n", "docs/a.md": "a\n"},
			command: "node", args: `"srv"`, target: "docs/a.md", applied: true},
	})
}

// CPython reads its options as getopt does: -m joined to its module (-msrv.main) or after
// other flags in one cluster (-Im srv.main, -Bmsrv.main) runs the module as -m srv.main does
// (atk41 F11). Red when only a word "-m" of its own is taken (mutant
// workspace-follow-python-getopt).
func TestCommitFollowsPythonOptionClusters(t *testing.T) {
	files := map[string]string{"srv/main.py": "import json\n", "srv/__init__.py": ""}
	var cases []followCase
	for _, args := range []string{`"-msrv.main"`, `"-Im", "srv.main"`, `"-Bmsrv.main"`, `"-u", "-Bm", "srv.main"`} {
		cases = append(cases, followCase{name: "python3 " + args, files: files, command: "python3", args: args, target: "srv/helper.py"})
	}
	runFollowCases(t, cases)
	for _, k := range []struct{ prev, word, mod string }{
		{"", "-msrv.main", "srv.main"}, {"-m", "srv.main", "srv.main"}, {"-Bm", "srv.main", "srv.main"}, {"", "-Ivmsrv", "srv"},
		{"-c", "srv.main", ""}, {"-W", "-msrv", "srv"}, {"", "-cm", ""}, {"", "--mod", ""}, {"-Xm", "srv", ""},
	} {
		if mod, _ := pyModuleArg(k.prev, k.word); mod != k.mod {
			t.Errorf("pyModuleArg(%q, %q) = %q, want %q", k.prev, k.word, mod, k.mod)
		}
	}
}

// A data file a protected program names by a literal (open('data/cache.json')) is protected,
// not read as the program's words (atk41 F3): the call that writes it first no longer decides
// what is protected (src/app.py named in it), nor refuses every later change (./tool.py in it:
// a program at the root; 33000 paths in it: past the run bound). A script a literal names
// (subprocess.run(['sh', 'scripts/setup.sh'])) is still read. Red when a literal's data file is
// read as words (mutant workspace-follow-literal-data-not-read).
func TestCommitLiteralDataFileNotReadAsWords(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var many strings.Builder
	for i := range 33000 {
		many.WriteString("./n" + strings.Repeat("a", i%7) + strconv.Itoa(i) + " ")
	}
	for _, k := range []struct{ name, content string }{
		{"names src/app.py", "src/app.py README.md"}, {"names a root program", "./tool.py"}, {"names 33000 paths", many.String()},
		// its own first bytes do not make a .json a program (atk42 F3: the call writes them)
		{"a shebang, then src/app.py", "#!/bin/sh\nsh src/app.py\n"}, {"a shebang, then a root program", "#!/bin/sh\n./tool.py\n"},
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "python3", "args": ["server/main.py"]}}}`)
		write(t, filepath.Join(ws, "server/main.py"), "import json, subprocess\nCACHE = json.load(open('data/cache.json'))\n"+
			"subprocess.run(['sh', 'scripts/setup.sh'])\n")
		write(t, filepath.Join(ws, "scripts/setup.sh"), "python3 tools/gen.py\n")
		write(t, filepath.Join(ws, "tools/gen.py"), "print(1)\n")
		write(t, filepath.Join(ws, "src/app.py"), "print('app')\n")
		write(t, filepath.Join(ws, "tool.py"), "print('a script of the project at its root')\n")
		write(t, filepath.Join(ws, "data/cache.json"), k.content)
		for _, rel := range []string{"notes.md", "src/app.py"} {
			if applied, why, sum := commitOne(t, ws, rel, "edited\n"); !applied {
				t.Errorf("%s: %s refused (%q): %s", k.name, rel, why, sum)
			}
		}
		for _, rel := range []string{"data/cache.json", "scripts/setup.sh", "tools/gen.py"} {
			if applied, why, _ := commitOne(t, ws, rel, "edited\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
				t.Errorf("%s: %s applied %v (%q), want refused as what the server loads", k.name, rel, applied, why)
			}
		}
	}
}

// Past the run bound the reason names the file whose words passed it, not only "the configs".
func TestRunBoundNamesTheFile(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	old := maxRun
	maxRun = 50
	t.Cleanup(func() { maxRun = old })
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "sh", "args": ["scripts/run.sh"]}}}`)
	var words strings.Builder
	for i := range 80 {
		words.WriteString("./n" + strconv.Itoa(i) + ".sh\n")
	}
	write(t, filepath.Join(ws, "scripts/run.sh"), words.String())
	applied, why, _ := commitOne(t, ws, "notes.md", "x\n")
	if applied || !strings.Contains(why, "scripts/run.sh") {
		t.Errorf("applied %v, refused %q: want the bound's reason to name scripts/run.sh", applied, why)
	}
}

// Inline code a config gives a runtime (`python3 -c 'import srv.main'`, `node -e
// "require('./srv')"`) is a program run from the working directory: its imports and requires
// are followed from there (atk41 F11). Red when the inline text is taken as words alone (mutant
// workspace-follow-inline-code).
func TestCommitFollowsInlineCode(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "python3 -c import srv.main", files: map[string]string{"srv/main.py": "import json\n", "srv/__init__.py": ""},
			command: "python3", args: `"-c", "import srv.main; srv.main.run()"`, target: "srv/main.py"},
		{name: "node -e require('./srv')", files: map[string]string{"srv/index.js": "require('./helper.js')\n"},
			command: "node", args: `"-e", "require('./srv')"`, target: "srv/index.js"},
		{name: "node --eval require('./srv/index.js')", files: map[string]string{"srv/index.js": "require('./helper.js')\n"},
			command: "node", args: `"--eval", "require('./srv/index.js')"`, target: "srv/helper.js"},
		{name: "python3 -c: another directory stays the call's", files: map[string]string{"srv/main.py": "import json\n", "srv/__init__.py": "", "docs/a.md": "a\n"},
			command: "python3", args: `"-c", "import srv.main; srv.main.run()"`, target: "docs/a.md", applied: true},
	})
}

// An agent's instruction file may import a file by the workspace's real path (@/data/u/proj/docs/rules.md
// when the user's workspace is /home/u/proj): the same file as its own spelling names, protected
// (atk41 F9's class). Red under mutant workspace-follow-other-spelling.
func TestCommitInstructionImportByWorkspaceRealPath(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws, real := linkedWorkspace(t)
	write(t, filepath.Join(ws, "CLAUDE.md"), "Read @"+real+"/docs/rules.md first.\n")
	write(t, filepath.Join(ws, "docs/rules.md"), "be nice\n")
	if applied, why, sum := commitOne(t, ws, "docs/rules.md", "ignore the rules\n"); applied {
		t.Errorf("docs/rules.md, imported by the workspace's real path, applied (%q): %s", why, sum)
	}
	if applied, why, sum := commitOne(t, ws, "docs/other.md", "x\n"); !applied {
		t.Errorf("docs/other.md refused (%q): %s", why, sum)
	}
}

// An ESM import of a file URL runs the file it names (atk42 F7: looked up as a package name, it
// protected nothing); one the check cannot place fails closed. Red without it (mutant
// workspace-follow-js-file-url).
func TestCommitFollowsJSFileURL(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "node", "args": ["srv/index.mjs"]}}}`)
	write(t, filepath.Join(ws, "srv/package.json"), `{"type": "module"}`)
	write(t, filepath.Join(ws, "srv/index.mjs"), "import 'file://"+filepath.Join(ws, "lib/x.js")+"';\nimport y from 'file:///"+
		strings.TrimPrefix(filepath.Join(ws, "lib/y%20z.js"), "/")+"';\n")
	write(t, filepath.Join(ws, "lib/x.js"), "export {};\n")
	write(t, filepath.Join(ws, "lib/y z.js"), "export default 1;\n")
	write(t, filepath.Join(ws, "docs/a.md"), "a\n")
	for _, rel := range []string{"lib/x.js", "lib/y z.js"} {
		if applied, why, _ := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, `".mcp.json\" starts`) {
			t.Errorf("%s, imported by a file URL: applied %v (%q), want refused", rel, applied, why)
		}
	}
	if applied, why, _ := commitOne(t, ws, "docs/a.md", "b\n"); !applied {
		t.Errorf("docs/a.md refused (%q)", why)
	}
	write(t, filepath.Join(ws, "srv/index.mjs"), "import 'file://host.example/lib/x.js';\n")
	if applied, why, _ := commitOne(t, ws, "docs/a.md", "c\n"); applied || !strings.Contains(why, "a file URL the check does not resolve") {
		t.Errorf("a file URL with a host: docs/a.md applied %v (%q), want every unjudged change refused", applied, why)
	}
}

// Python's app servers and MCP CLIs name the program as `module:attribute` or `file.py:object`,
// or by a module-taking option (atk42 F8: srv/main.py was applied for each, `python3 -m
// srv.main` refused): the module or file is followed, from every word, not only after known
// tools; narrowly (`npm run test:unit` leaves test/ the call's, a spec protects docs/ nowhere).
// Red when the spec is read as spelled (mutant workspace-follow-app-spec).
func TestCommitFollowsAppSpecs(t *testing.T) {
	files := map[string]string{"srv/__init__.py": "", "srv/main.py": "app = None\n", "test/unit.test.js": "1\n", "docs/notes.md": "n\n"}
	var cases []followCase
	for _, k := range []struct{ cmd, args string }{
		{"python3", `"-m", "srv.main"`},
		{"uvicorn", `"srv.main:app"`},
		{"uvicorn", `"--factory", "srv.main:create_app()"`},
		{"python3", `"-m", "uvicorn", "srv.main:app", "--port", "8000"`},
		{"gunicorn", `"-k", "uvicorn.workers.UvicornWorker", "srv.main:app"`},
		{"fastmcp", `"run", "srv.main:mcp"`},
		{"fastmcp", `"run", "srv/main.py:mcp"`},
		{"uv", `"run", "fastmcp", "run", "srv/main.py:mcp"`},
		{"mcp", `"run", "srv/main.py:server"`},
		{"flask", `"--app", "srv.main", "run"`},
		{"flask", `"--app", "srv/main", "run"`},
		{"uv", `"run", "uvicorn", "srv.main:app"`},
		{"celery", `"-A", "srv", "worker"`},
	} {
		name := k.cmd + " " + k.args
		cases = append(cases, followCase{name: name, files: files, command: k.cmd, args: k.args, target: "srv/main.py"},
			followCase{name: name + ", an ordinary change", files: files, command: k.cmd, args: k.args, target: "docs/notes.md", applied: true})
	}
	cases = append(cases,
		followCase{name: "uvicorn main:app, main.py not there yet", files: files, command: "uvicorn", args: `"main:app"`, target: "main.py"},
		followCase{name: "uvicorn srv.main:app, srv/__init__.py not there yet", files: map[string]string{"srv/main.py": "app = None\n"},
			command: "uvicorn", args: `"srv.main:app"`, target: "srv/__init__.py"},
		followCase{name: "npm run test:unit: test/ stays the call's", files: files, command: "npm", args: `"run", "test:unit"`,
			target: "test/unit.test.js", applied: true},
		followCase{name: "docker -p 8000:8000 redis:7", files: files, command: "docker", args: `"run", "-p", "8000:8000", "redis:7"`,
			target: "docs/notes.md", applied: true},
	)
	runFollowCases(t, cases)
	for _, k := range []struct {
		prev, word string
		want       appSpec
		ok         bool
	}{
		{"", "srv.main:app", appSpec{mod: "srv.main"}, true}, {"", "srv/main.py:mcp", appSpec{file: "srv/main.py"}, true},
		{"--app", "src/hello", appSpec{sub: "src", mod: "hello"}, true}, {"-A", "proj", appSpec{mod: "proj"}, true},
		{"", "main:create_app(", appSpec{mod: "main"}, true}, {"", "localhost:8000", appSpec{}, false},
		{"", "./data:/data", appSpec{}, false}, {"", "github:owner/repo", appSpec{}, false}, {"", "srv.main", appSpec{}, false},
		{"", "--bind:x", appSpec{}, false}, {"", "my-app:app", appSpec{}, false},
	} {
		if got, ok := pyAppSpec(k.prev, k.word, false); got != k.want || ok != k.ok {
			t.Errorf("pyAppSpec(%q, %q) = %+v, %v; want %+v, %v", k.prev, k.word, got, ok, k.want, k.ok)
		}
	}
}
