//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// testExec builds an executor over a fresh workspace with the given commands (by binary name,
// so their models apply) without starting helpers.
func testExec(t *testing.T, mutate func(al *alsec.Allowlist)) (*Executor, string, string) {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	out := filepath.Join(root, "out")
	os.Mkdir(ws, 0o755)
	os.Mkdir(out, 0o755)
	al := &alsec.Allowlist{Workspace: ws}
	if mutate != nil {
		mutate(al)
	}
	e := &Executor{ws: ws, al: al, cmds: map[string]*pinned{}}
	var err error
	if e.protect, err = compileProtect(al.Protected()); err != nil {
		t.Fatal(err)
	}
	e.protNames = protNames(e.protect)
	return e, ws, out
}

func (e *Executor) cmd(name string) *pinned {
	return &pinned{Command: policy.Command{Name: name}, model: models[name]}
}

func refusedBy(err error) string {
	if r, ok := err.(*executor.Refusal); ok {
		return r.Rule
	}
	if err != nil {
		return "error: " + err.Error()
	}
	return ""
}

// Item 6(a): ".." applies to where a symlink led, as in the kernel; lexical cleaning judged
// link/../x as x.
func TestResolveLikeTheKernel(t *testing.T) {
	e, ws, out := testExec(t, nil)
	os.MkdirAll(filepath.Join(out, "deep", "er"), 0o755)
	os.Symlink(filepath.Join(out, "deep", "er"), filepath.Join(ws, "link"))
	os.Mkdir(filepath.Join(ws, ".git"), 0o755)
	os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755)
	os.Symlink("a/b", filepath.Join(ws, "ab"))
	for p, want := range map[string]string{
		"link/../x":        filepath.Join(out, "deep", "x"), // lexically "x": inside
		"link/../../x":     filepath.Join(out, "x"),
		"ab/../c":          filepath.Join(ws, "a", "c"), // lexically "c"
		"ab/../../x":       filepath.Join(ws, "x"),
		"new/../x":         filepath.Join(ws, "x"),
		"a/./b//file":      filepath.Join(ws, "a", "b", "file"),
		"/etc/../etc/host": "/etc/host",
	} {
		if r := e.resolve(p); r.path != want {
			t.Errorf("resolve(%q) = %q, want %q", p, r.path, want)
		}
	}
	if r := e.resolve("link/../x"); r.inside {
		t.Error("link/../x judged inside the workspace")
	}
	os.Symlink("loop2", filepath.Join(ws, "loop1"))
	os.Symlink("loop1", filepath.Join(ws, "loop2"))
	if r := e.resolve("loop1/x"); r.err == nil {
		t.Error("a symlink loop resolved")
	}
	for _, p := range []string{"/proc/self/cwd/x", "/proc/1/root", "/dev/fd/5", "/proc"} {
		if r := e.resolve(p); r.err == nil {
			t.Errorf("%s resolved from the server's view: %+v", p, r)
		}
	}
}

// Items 1, 6(b)(c)(d): every spelling of a protected write is refused; reads and non-path
// values are not; the sort -t/ false positive is gone.
func TestProtectedWrites(t *testing.T) {
	e, ws, _ := testExec(t, func(al *alsec.Allowlist) { al.Protect = []string{"secrets", "!CLAUDE.md", "CLAUDE[0-9].md"} })
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755)
		os.WriteFile(filepath.Join(ws, p), []byte(s), 0o644)
	}
	write("notes.txt", "x\n")
	write(".husky/pre-commit", "#!/bin/sh\n")
	write("CLAUDE.md", "hi")
	// a git directory under another name, reached through a symlinked .git, with hooksPath
	exec.Command("git", "init", "-q", "--separate-git-dir", filepath.Join(ws, "realgit"), filepath.Join(ws, "repo")).Run()
	exec.Command("git", "init", "-q", filepath.Join(ws, "top")).Run()
	exec.Command("git", "-C", filepath.Join(ws, "top"), "config", "core.hooksPath", "tools/hooks").Run()
	os.MkdirAll(filepath.Join(ws, "top", "tools", "hooks"), 0o755)
	os.Mkdir(filepath.Join(ws, "gitstore"), 0o755)
	exec.Command("git", "init", "-q", "--bare", filepath.Join(ws, "gitstore", "g")).Run()
	os.Symlink("gitstore/g", filepath.Join(ws, ".git"))
	os.Mkdir(filepath.Join(ws, "hooks-real"), 0o755)
	os.Symlink("hooks-real", filepath.Join(ws, ".githooks"))

	refused := map[string][]string{
		"sort":   {"-o.husky/pre-commit notes.txt", "-no.husky/x notes.txt", "-rno.husky/x notes.txt", "--output=.husky/x notes.txt", "--outp .husky/x notes.txt", "-o .npmrc notes.txt", "-o sub/.npmrc notes.txt", "-o .github/workflows/ci.yml notes.txt", "-T .git notes.txt", "-o realgit/hooks/pre-commit notes.txt", "-o top/tools/hooks/pre-commit notes.txt", "-o gitstore/g/hooks/post-checkout notes.txt", "-o hooks-real/x notes.txt", "-o secrets/k notes.txt", "-o x/../.husky/y notes.txt", "-o AGENTS.md notes.txt", "-o __pycache__/m.cpython-311.pyc notes.txt"},
		"uniq":   {"notes.txt .envrc", "notes.txt .vscode/tasks.json"},
		"split":  {"notes.txt .husky/pre-", "-a1 --additional-suffix=c notes.txt .npm", "notes.txt .gi", "-a1 notes.txt .npmr", "--additional-suffix=.py notes.txt conftes"},
		"csplit": {"-f .husky/pre- notes.txt 1", "-f CLAUDE -b %d.md notes.txt 1", "-f .gi notes.txt 1"},
		"tee":    {".git/config"},
		"sed":    {"-i.bak -e s/x/y/ .husky/pre-commit"}, // no model: judged as writes
	}
	for prog, list := range refused {
		for _, a := range list {
			_, err := e.checkArgs(e.cmd(prog), strings.Fields(a))
			if refusedBy(err) != "allowlist.protect" {
				t.Errorf("%s %s: %v, want a protect refusal", prog, a, err)
			}
		}
	}
	allowed := map[string][]string{
		"sort":   {"-t/ -k2 notes.txt", "-t / notes.txt", "-o out.txt notes.txt", "-o CLAUDE.md notes.txt", "-o husky notes.txt"},
		"cat":    {".husky/pre-commit", "AGENTS.md", ".git/HEAD"},
		"grep":   {"-e .git notes.txt", ".npmrc notes.txt", "-r x ."},
		"split":  {"notes.txt part-", "-a1 notes.txt npm-", "--additional-suffix=rc notes.txt .npm"},
		"csplit": {"-f part notes.txt 1"},
		"uniq":   {"notes.txt out.txt"},
	}
	for prog, list := range allowed {
		for _, a := range list {
			if _, err := e.checkArgs(e.cmd(prog), strings.Fields(a)); err != nil {
				t.Errorf("%s %s refused: %v", prog, a, err)
			}
		}
	}
	// The split default prefix "x" never makes a protected name; an empty suffix set is fine.
	if roots := e.protectedNow(true); !slices.Contains(roots, filepath.Join(ws, "gitstore", "g")) || !slices.Contains(roots, filepath.Join(ws, ".husky")) || !slices.Contains(roots, filepath.Join(ws, "hooks-real")) {
		t.Errorf("read-only binds %v miss the resolved git dir, .husky or the symlinked hooks dir", roots)
	}
}

// Item 2: refusals never name what lies outside the workspace.
func TestRefusalsNameNothingOutside(t *testing.T) {
	e, ws, out := testExec(t, nil)
	os.WriteFile(filepath.Join(out, "private-name-7f3a"), []byte("x"), 0o644)
	os.Symlink(filepath.Join(out, "private-name-7f3a"), filepath.Join(ws, "innocent"))
	os.Symlink(out, filepath.Join(ws, "dir"))
	for _, a := range []string{"innocent", "dir/x", "/proc/self/fd/5", "/proc/1/cwd/x", "/proc/self/exe", "/dev/fd/3", "../out/x", "/etc/shadow"} {
		_, err := e.checkArgs(e.cmd("cat"), []string{a})
		if refusedBy(err) != "allowlist.workspace" {
			t.Errorf("cat %s: %v", a, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, out) || strings.Contains(msg, "private-name") || strings.Contains(msg, filepath.Dir(ws)) && !strings.Contains(a, filepath.Dir(ws)) {
			t.Errorf("cat %s: refusal names what is outside: %s", a, msg)
		}
	}
}

// Item 7: a host-made hard link is refused, or allowed read-only by the switch.
func TestHardLinks(t *testing.T) {
	e, ws, out := testExec(t, nil)
	os.WriteFile(filepath.Join(out, "store"), []byte("x"), 0o644)
	if err := os.Link(filepath.Join(out, "store"), filepath.Join(ws, "linked")); err != nil {
		t.Skip("no hard links here:", err)
	}
	for _, c := range [][]string{{"cat", "linked"}, {"sort", "-o", "linked", "x"}, {"wc", "linked"}, {"sed", "-n", "p", "linked"}, {"grep", "-e", "x", "linked"}} {
		if _, err := e.checkArgs(e.cmd(c[0]), c[1:]); refusedBy(err) != "allowlist.hardlinks" {
			t.Errorf("%q: %v, want a hardlinks refusal", c, err)
		}
	}
	e.al.HardLinks = alsec.HardLinksReadOnly
	chk, err := e.checkArgs(e.cmd("cat"), []string{"linked"})
	if err != nil || !slices.Equal(chk.roBinds, []string{filepath.Join(ws, "linked")}) {
		t.Errorf("read-only mode: %v %+v", err, chk)
	}
	if _, err := e.checkArgs(e.cmd("sort"), []string{"-o", "linked", "x"}); refusedBy(err) != "allowlist.hardlinks" {
		t.Errorf("read-only mode let a write through: %v", err)
	}
}

func TestGlobsIntersect(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{".npm\x01rc", ".npmrc", false}, {".npm\x01c", ".npmrc", true}, {".gi\x01", ".git", true}, {".gi\x01", ".git/*", false},
		{"x\x01", ".git", false}, {"part-\x01", "*/.git", false}, {"a/x\x01", "*/.git", false}, {"a/.gi\x01", "*/.git", true},
		{".npm*rc", ".npmrc", true}, {"a*", "*b", true}, {"a/b*", "a/*", true}, {"conftes*.py", "conftest.py", true},
		{"[.]git", ".git", true}, {"*.pyc", "x*", true},
	} {
		if got := globsIntersect(globTokens(c.a), globTokens(c.b)); got != c.want {
			t.Errorf("intersect(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestCheckWorkspace(t *testing.T) {
	root := t.TempDir()
	os.Symlink("/usr", filepath.Join(root, "usrlink"))
	for _, c := range []struct{ conf, ws string }{
		{"/usr", "/usr"}, {filepath.Join(root, "usrlink"), "/usr"}, {"/tmp", "/tmp"}, {"/etc/x", "/etc/x"},
		{"/var/tmp", "/var/tmp"}, {"/home", "/home"}, {"/usr/local/share/x", "/usr/local/share/x"},
	} {
		if err := checkWorkspace(c.conf, c.ws); err == nil {
			t.Errorf("workspace %s (%s) accepted", c.conf, c.ws)
		}
	}
	for _, ws := range []string{filepath.Join(root, "ws"), "/tmp/x", "/home/me/ai", "/root/ws", "/srv/ai"} {
		if err := checkWorkspace(ws, ws); err != nil {
			t.Errorf("workspace %s refused: %v", ws, err)
		}
	}
}

func TestInterpreterBehind(t *testing.T) {
	dir := t.TempDir()
	os.Symlink("/bin/sh", filepath.Join(dir, "count"))
	if got := InterpreterBehind(policy.Command{Name: "count", Path: filepath.Join(dir, "count")}); got == "" {
		t.Error("a symlink to sh not recognised")
	}
	if got := InterpreterBehind(policy.Command{Name: "wc", Path: "/usr/bin/wc"}); got != "" {
		t.Errorf("wc taken for %s", got)
	}
	if CheckWorkspace("/usr/../etc") == nil || CheckWorkspace(dir) != nil {
		t.Error("CheckWorkspace")
	}
}

// A call without its command names the missing argument, as the other tools do (trial46 F2:
// `"" is not allowlisted`); an unknown one is still the allowlist's refusal. Red with mutant
// allowlist-command-missing-unsaid.
func TestMissingCommandNamed(t *testing.T) {
	e, _, _ := testExec(t, nil)
	e.cmds["wc"], e.names = e.cmd("wc"), []string{"wc"}
	for args, want := range map[string]string{`{"args":["a.txt"]}`: "tool.arguments", `null`: "tool.arguments", `{"command":"bash"}`: "allowlist.commands"} {
		_, err := e.run(context.Background(), executor.Call{Args: json.RawMessage(args)})
		if refusedBy(err) != want || want == "tool.arguments" && !strings.Contains(err.Error(), "command is required: name one of wc") {
			t.Errorf("%s: %v, want a refusal by %s", args, err, want)
		}
	}
}
