package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The words the trial saw (trial37 F1, F3) are known for what the policy did; a program's own
// error that is neither is not.
func TestFailureNotesKnowTheTrialsWords(t *testing.T) {
	for _, c := range []struct {
		stderr     string
		code       int
		mem, exec_ bool
	}{
		{"fatal error: failed to reserve page summary memory\n\nruntime stack:\nruntime.throw(...)", 2, true, false},
		{"RangeError: WebAssembly.instantiate(): Out of memory: Cannot allocate Wasm memory for new instance", 1, true, false},
		{"#\n# Fatal process OOM in Failed to reserve virtual memory for CodeRange\n#", 133, true, false},
		{"Error occurred during initialization of VM\nCould not reserve enough space for 262144KB object heap", 1, true, false},
		{"go: error obtaining buildID for go tool compile: fork/exec /usr/local/go/pkg/tool/linux_amd64/compile: permission denied", 1, false, true},
		{"npm error code EACCES\nnpm error syscall spawn sh\nnpm error path /w\nnpm error errno -13", 1, false, true},
		{"Error: spawn sh EACCES\n    at ChildProcess._handle.onexit", 1, false, true},
		{"make: execvp: cc: Permission denied\nmake: *** [Makefile:2: all] Error 127", 2, false, true},
		{"  File \"/usr/lib/python3.11/subprocess.py\", line 1901, in _execute_child\n    raise child_exception_type(errno_num, err_msg, err_filename)\nPermissionError: [Errno 13] Permission denied: 'ls'", 1, false, true},
		{"Traceback (most recent call last):\n  File \"<string>\", line 2, in <module>\n    os.execv('/usr/bin/ls', ['ls'])\nPermissionError: [Errno 13] Permission denied", 1, false, true},
		{"cat: x: Permission denied", 1, false, false},
		{"open /etc/shadow: permission denied", 1, false, false},
		{"fatal error: failed to reserve page summary memory", 0, false, false}, // exit 0: printed, not suffered
	} {
		notes := FailureNotes(c.stderr, c.code, 256<<20)
		all := strings.Join(notes, "\n")
		if got := strings.Contains(all, "limits.memory is 256MiB (address space, not RSS"); got != c.mem {
			t.Errorf("%q (exit %d): memory note %t, want %t: %q", c.stderr, c.code, got, c.mem, all)
		}
		if got := strings.Contains(all, "may execute only its pinned binary"); got != c.exec_ {
			t.Errorf("%q (exit %d): exec note %t, want %t: %q", c.stderr, c.code, got, c.exec_, all)
		}
	}
}

// A real call: a Go program under the default memory dies at start, and python's exec of
// another program is refused (an exec, not a fork: a fork can meet the pids limit of a uid
// other tests share); each result names the rule and its fix. Catches the mutant
// allowlist-failure-note-none.
func TestFailedCallsNameTheLimitOrRule(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := wcPolicy(t)
	// the test binary is a Go program: a copy where the sandbox's user can reach it
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	goprog := filepath.Join(dir, "goprog")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goprog, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{goprog, "/usr/bin/python3"} {
		if _, err := os.Stat(path); err != nil {
			t.Skipf("%s: %v", path, err)
		}
		c, err := generate.Pin(path)
		if err != nil {
			t.Fatal(err)
		}
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	}
	p.Limits.Memory = policy.Default(alsec.Name).Limits.Memory
	// a script, so the traceback shows the line that failed, as a user's program's does
	os.WriteFile(filepath.Join(alsec.Of(p).Workspace, "run.py"), []byte("import os\nos.execv('/usr/bin/ls', ['ls'])\n"), 0o644)
	e := readyExecutor(t, p, exe)
	for _, c := range []struct {
		cmd  string
		args []string
		want string
	}{
		{"goprog", []string{"-test.run=^$"}, "limits.memory is " + p.Limits.Memory.String() + " (address space, not RSS"},
		{"python3", []string{"run.py"}, "may execute only its pinned binary"},
	} {
		args, _ := json.Marshal(map[string]any{"command": c.cmd, "args": c.args})
		res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 20 * time.Second, MaxOutput: 64 << 10})
		if err != nil {
			t.Fatalf("%s: %v", c.cmd, err)
		}
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, "[mcpsandbox: ") || !strings.Contains(res.Stderr, c.want) {
			t.Errorf("%s: exit %d, stderr without the note %q:\n%s", c.cmd, res.ExitCode, c.want, res.Stderr)
		}
	}
}

// trial48 F2: under a root serve a workspace root owns (mode 755) refused every write_file
// "(its owner or mode)" and said nothing to do; the refusal now names the fix verify's MS113
// names, and WorkspaceUnwritable (serve's start log, --check) says it, measured for the calls'
// user. Red under mutants files-unwritable-no-fix and serve-workspace-unwritable-unsaid.
func TestUnwritableWorkspaceSaysTheFix(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the calls run as another user only under a root serve")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	os.Chmod(filepath.Dir(ws), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(ws)), 0o755)
	e := &Executor{ws: ws, al: &alsec.Allowlist{Workspace: ws}, uid: 65534, gid: 65534, dropUID: true}
	fix := "chown -R 65534:65534 " + ws + ", or set allowlist.user"
	_, err := e.filesFS().WriteFile(context.Background(), executor.Call{}, "b.txt", []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "may not create files in .") || !strings.Contains(err.Error(), "to let them: "+fix) {
		t.Errorf("write_file: %v", err)
	}
	why, got := e.WorkspaceUnwritable()
	if !strings.Contains(why, "is not theirs to write") || got != fix {
		t.Errorf("WorkspaceUnwritable: %q, %q", why, got)
	}
	// allowlist.user: the fix names that user
	e.al.User, e.uid, e.gid = "1234:1234", 1234, 1234
	if why, got := e.WorkspaceUnwritable(); !strings.Contains(why, "uid 1234 (allowlist.user)") || got != "chown -R 1234:1234 "+ws+", or set allowlist.user" {
		t.Errorf("WorkspaceUnwritable with allowlist.user: %q, %q", why, got)
	}
	os.Chown(ws, 1234, 1234)
	if why, _ := e.WorkspaceUnwritable(); why != "" {
		t.Errorf("a workspace its user writes: %q", why)
	}
}

// trial48 F2's rest: a command's own write refused in a workspace the calls' user may not write
// (`sort -o out.txt f` under a root serve, the workspace root's, mode 755) said only the
// program's "Permission denied"; the result now ends with serve's note and the fix. A read-only
// command's failure in the same workspace gets none. Red under mutant
// allowlist-unwritable-note-none.
func TestCommandDeniedInUnwritableWorkspaceSaysTheFix(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the calls run as another user only under a root serve")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := wcPolicy(t) // its workspace: root's, mode 755
	e := readyExecutor(t, p, exe)
	if why, _ := e.WorkspaceUnwritable(); why == "" {
		t.Skip("the commands' user may write this workspace here: nothing to note")
	}
	for _, c := range []struct {
		cmd  string
		args []string
		note bool
	}{
		{"sort", []string{"-o", "out.txt", "f"}, true},
		{"wc", []string{"nothere"}, false},
	} {
		args, _ := json.Marshal(map[string]any{"command": c.cmd, "args": c.args})
		res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 20 * time.Second, MaxOutput: 64 << 10})
		if err != nil {
			t.Fatalf("%s: %v", c.cmd, err)
		}
		if got := strings.Contains(res.Stderr, "to let them: chown -R 65534:65534"); res.ExitCode == 0 || got != c.note {
			t.Errorf("%s: exit %d, the fix noted %t, want %t:\n%s", c.cmd, res.ExitCode, got, c.note, res.Stderr)
		}
	}
}

// readyExecutor is an Executor of p (its exec helper exe), ready, closed when the test ends.
func readyExecutor(t testing.TB, p *policy.Policy, exe string) *Executor {
	return readyWith(t, p, Options{HelperPath: exe})
}

// readyWith is an Executor of p with o, ready, closed when the test ends.
func readyWith(t testing.TB, p *policy.Policy, o Options) *Executor {
	t.Helper()
	e, err := New(p, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	return e
}
