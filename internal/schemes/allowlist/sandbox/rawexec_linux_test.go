package sandbox

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"golang.org/x/sys/unix"
)

// The direct start and the exec helper apply one recipe: the same attacks, run both ways, must
// fail (or work) the same way, measured from inside and judged here. Each line of the program
// is "name: outcome".
const layerProbe = `
import os, socket, errno, ctypes
def attempt(name, f):
    try:
        print(name + ": " + str(f()))
    except OSError as e:
        print(name + ": " + (errno.errorcode.get(e.errno) or str(e)))
def w(path):
    with open(path, "w") as f:
        f.write("x")
    return "written"
attempt("uid", os.getuid)
attempt("pid", os.getpid)
attempt("read-outside", lambda: len(os.listdir("/root")))
attempt("write-outside", lambda: w("/var/tmp/mcpsandbox-direct-probe"))
attempt("write-workspace", lambda: w("out.txt"))
attempt("write-tmp", lambda: w("/tmp/t"))
attempt("tmp-empty", lambda: sorted(os.listdir("/tmp")))
attempt("write-protected", lambda: w(".git/hooks/pre-commit"))
attempt("write-workflow", lambda: w(".github/workflows/ci.yml"))
attempt("rename-parent", lambda: os.rename(".github", "gh-old") or "renamed")
attempt("socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).fileno() > 0)
libc = ctypes.CDLL(None, use_errno=True)
attempt("unshare", lambda: "ok" if libc.unshare(0) == 0 else errno.errorcode.get(ctypes.get_errno()))
attempt("seccomp", lambda: libc.prctl(21, 0, 0, 0, 0)) # PR_GET_SECCOMP
attempt("nnp", lambda: libc.prctl(39, 0, 0, 0, 0))     # PR_GET_NO_NEW_PRIVS
attempt("dumpable", lambda: libc.prctl(3, 0, 0, 0, 0)) # PR_GET_DUMPABLE
attempt("pdeathsig", lambda: (lambda s: libc.prctl(2, ctypes.byref(s), 0, 0, 0) or s.value)(ctypes.c_int()))
attempt("nofile", lambda: __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE))
attempt("nice", lambda: os.nice(0))
attempt("env", lambda: sorted(k for k in os.environ))
attempt("cwd", os.getcwd)
`

func TestDirectStartMatchesHelper(t *testing.T) {
	if os.Geteuid() != 0 || !directArch {
		t.Skip("the direct start is used by a root serve on amd64 only")
	}
	run := func(viaHelper bool) map[string]string {
		e := pythonExecutor(t, nil, viaHelper)
		if got := e.directOK(); got == viaHelper {
			t.Fatalf("viaHelper=%v: directOK()=%v", viaHelper, got)
		}
		// A .git the sandbox's uid owns: only the read-only mount can stop the write.
		hooks := filepath.Join(e.ws, ".git", "hooks")
		os.MkdirAll(hooks, 0o755)
		os.Chown(filepath.Dir(hooks), 65534, 65534)
		os.Chown(hooks, 65534, 65534)
		wf := filepath.Join(e.ws, ".github", "workflows")
		os.MkdirAll(wf, 0o755)
		os.Chown(filepath.Dir(wf), 65534, 65534)
		os.Chown(wf, 65534, 65534)
		res := runPython(t, e, layerProbe)
		if res.ExitCode != 0 {
			t.Fatalf("viaHelper=%v: exit %d: %s", viaHelper, res.ExitCode, res.Stderr)
		}
		got := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
			k, v, _ := strings.Cut(l, ": ")
			got[k] = v
		}
		got["cwd"] = strings.TrimPrefix(got["cwd"], e.ws) // each run has its own workspace
		return got
	}
	direct, helper := run(false), run(true)
	want := map[string]string{"uid": "65534", "pid": "1", "read-outside": "EACCES", "write-outside": "EACCES",
		"write-workspace": "written", "write-tmp": "written", "write-protected": "EROFS", "write-workflow": "EROFS", "rename-parent": "EBUSY",
		"socket": "EACCES", "unshare": "EPERM", "seccomp": "2", "nnp": "1", "pdeathsig": "9", "nofile": "(256, 256)", "nice": "10", "cwd": ""}
	for k, v := range want {
		if direct[k] != v {
			t.Errorf("direct start: %s = %q, want %q", k, direct[k], v)
		}
	}
	for k := range helper {
		if helper[k] != direct[k] {
			t.Errorf("%s: the helper gives %q, the direct start %q", k, helper[k], direct[k])
		}
	}
	if len(helper) != len(direct) || len(direct) < len(want) {
		t.Errorf("different reports: helper %v, direct %v", helper, direct)
	}
}

// A directory a program may read recursively is refused when a file below it has another hard
// link (the host made it; the other name may be outside the workspace), named or implied (grep
// -r with no file searches the working directory). ls -R only lists: allowed.
func TestHardLinkBelowDirectory(t *testing.T) {
	e := pythonExecutor(t, nil, false)
	outsideFile := hardLinkWorkspace(t, e)
	checkHardLinkCases(t, e, outsideFile, []hardLinkCase{
		{"grep", []string{"-r", "", "vendor"}, true},
		{"grep", []string{"-rn", "s3cret"}, true},              // the working directory, implied
		{"grep", []string{"--recursive", "s3cret", "."}, true}, // named
		{"grep", []string{"-r", "a", "clean"}, false},          // control: no link below
		{"grep", []string{"s3cret"}, false},                    // control: stdin only
		{"ls", []string{"-R", "vendor"}, false},                // control: lists, never reads
		{"cat", []string{"vendor/pkg/x"}, true},
	})
}

// hardLinkWorkspace gives e's workspace vendor/pkg/x, a hard link to a file outside it holding
// "s3cret", and clean/a; it returns the outside file.
func hardLinkWorkspace(t *testing.T, e *Executor) string {
	t.Helper()
	outsideFile := filepath.Join(t.TempDir(), "secret")
	os.WriteFile(outsideFile, []byte("s3cret\n"), 0o644)
	os.MkdirAll(filepath.Join(e.ws, "vendor", "pkg"), 0o755)
	os.MkdirAll(filepath.Join(e.ws, "clean"), 0o755)
	os.WriteFile(filepath.Join(e.ws, "clean", "a"), []byte("a\n"), 0o644)
	if err := os.Link(outsideFile, filepath.Join(e.ws, "vendor", "pkg", "x")); err != nil {
		t.Skipf("cannot make a hard link here: %v", err)
	}
	return outsideFile
}

// hardLinkCase is an argument list and whether its check refuses it naming allowlist.hardlinks.
type hardLinkCase struct {
	cmd    string
	args   []string
	refuse bool
}

// checkHardLinkCases checks each case's arguments; a refusal must not name the file outside.
func checkHardLinkCases(t *testing.T, e *Executor, outsideFile string, cases []hardLinkCase) {
	t.Helper()
	for _, c := range cases {
		pc := e.cmds[c.cmd]
		if pc == nil {
			t.Fatalf("%s is not allowlisted in the test policy", c.cmd)
		}
		_, err := e.checkArgs(pc, c.args)
		var ref *executor.Refusal
		refused := errors.As(err, &ref) && ref.Rule == "allowlist.hardlinks"
		if refused != c.refuse {
			t.Errorf("%s %q: refused=%v (%v), want refused=%v", c.cmd, c.args, refused, err, c.refuse)
		}
		if refused && strings.Contains(err.Error(), outsideFile) {
			t.Errorf("%s %q: the refusal names the file outside: %v", c.cmd, c.args, err)
		}
	}
}

// A descriptor serve inherited without close-on-exec (an MCP client that started serve with
// extra open files) does not reach the command, whichever way it starts.
func TestInheritedDescriptorsClosed(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "inherited")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd())) // unix.Dup: no close-on-exec, as if inherited
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	prog := fmt.Sprintf(`
import os
try:
    os.fstat(%d)
    print("open")
except OSError as e:
    print("closed", e.errno)
try:
    os.fstat(1)
    print("stdout open")
except OSError as e:
    print("stdout closed")`, fd)
	for _, viaHelper := range []bool{false, true} {
		e := pythonExecutor(t, nil, viaHelper)
		res := runPython(t, e, prog)
		if !strings.Contains(res.Stdout, "closed 9") || !strings.Contains(res.Stdout, "stdout open") {
			t.Errorf("viaHelper=%v: descriptor %d inherited by serve: %q (stderr %q)", viaHelper, fd, res.Stdout, res.Stderr)
		}
	}
}

// A pinned path replaced after start by a FIFO is refused at once (serve never waits on it),
// and one replaced by a symbolic link to an identical copy is refused too: calls run what the
// path resolved to when serve started, by that name only.
func TestPinnedPathReplaced(t *testing.T) {
	binDir := t.TempDir()
	os.Chmod(binDir, 0o755)
	orig, err := os.ReadFile("/usr/bin/wc")
	if err != nil {
		t.Skip("no /usr/bin/wc")
	}
	mywc := filepath.Join(binDir, "mywc")
	os.WriteFile(mywc, orig, 0o755)
	c, err := generate.Pin(mywc)
	if err != nil {
		t.Fatal(err)
	}
	c.Name = "mywc"
	e := pythonExecutor(t, nil, false)
	e.cmds["mywc"], err = pin(c)
	if err != nil {
		t.Fatal(err)
	}
	call := func() (*executor.Result, error) {
		args, _ := json.Marshal(map[string]any{"command": "mywc", "args": []string{}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return e.run(ctx, executor.Call{Args: args, Timeout: 5 * time.Second, MaxOutput: 64 << 10})
	}
	if res, err := call(); err != nil || res.ExitCode != 0 {
		t.Fatalf("control: the pinned copy does not run: %v %+v", err, res)
	}
	// A symbolic link to an identical copy elsewhere.
	copyPath := filepath.Join(t.TempDir(), "wc-copy")
	os.WriteFile(copyPath, orig, 0o755)
	os.Remove(mywc)
	os.Symlink(copyPath, mywc)
	var ref *executor.Refusal
	if _, err := call(); !errors.As(err, &ref) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("a symlink in place of the pinned binary: %v, want a refusal", err)
	}
	// A FIFO: no open may wait on it.
	os.Remove(mywc)
	if err := unix.Mkfifo(mywc, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := call(); !errors.As(err, &ref) || !strings.Contains(err.Error(), "regular file") {
		t.Errorf("a FIFO in place of the pinned binary: %v, want a refusal", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call waited %s on a FIFO", d)
	}
}

// An interpreter's call gets the protected paths below the top level read-only too (a nested
// repository's .git/config, docs/CLAUDE.md, a sub-project's .npmrc), with their parents pinned;
// an unprotected file beside them stays writable (control).
func TestNestedProtectedReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("read-only mounts need a mount namespace: root")
	}
	for _, viaHelper := range []bool{false, true} {
		e := pythonExecutor(t, nil, viaHelper)
		for _, f := range []string{"a/.git/config", "docs/CLAUDE.md", "lib/.npmrc", "docs/notes.md"} {
			p := filepath.Join(e.ws, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("x\n"), 0o644)
		}
		filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error { return os.Chown(p, 65534, 65534) })
		// The program is passed hex-encoded: the argument check would refuse the protected
		// names spelled out in its text, and it is the kernel's answer that is under test.
		res := runPython(t, e, fmt.Sprintf("exec(bytes.fromhex(%q).decode())", hex.EncodeToString([]byte(nestedProbe))))
		want := map[string]string{"a/.git/config": "EROFS", "docs/CLAUDE.md": "EROFS", "lib/.npmrc": "EROFS",
			"docs/notes.md": "written", "rename docs": "EBUSY"}
		for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
			i := strings.LastIndex(l, " ")
			if i < 0 {
				continue
			}
			if w, ok := want[l[:i]]; ok && w != l[i+1:] {
				t.Errorf("viaHelper=%v: %s: %s, want %s", viaHelper, l[:i], l[i+1:], w)
			}
			delete(want, l[:i])
		}
		if len(want) > 0 {
			t.Errorf("viaHelper=%v: no report for %v: %q %q", viaHelper, want, res.Stdout, res.Stderr)
		}
	}
}

const nestedProbe = `
import errno, os
def w(path):
    try:
        with open(path, "a") as f:
            f.write("y")
        return "written"
    except OSError as e:
        return errno.errorcode.get(e.errno)
for p in ["a/.git/config", "docs/CLAUDE.md", "lib/.npmrc", "docs/notes.md"]:
    print(p, w(p))
try:
    os.rename("docs", "docs-old")
    print("rename docs", "renamed")
except OSError as e:
    print("rename docs", errno.errorcode.get(e.errno))
`
