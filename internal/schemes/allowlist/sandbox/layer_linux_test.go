package sandbox

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"golang.org/x/sys/unix"
)

func refusedPaths(w *executor.WorkspaceChanges) map[string]string {
	m := map[string]string{}
	if w != nil {
		for _, r := range w.Refused {
			m[r.Path] = r.Why
		}
	}
	return m
}

func needLayer(t *testing.T, e *Executor) {
	t.Helper()
	// As root the layer is always possible: without it the tests run on and their assertions
	// say what reached the host.
	if e.layerRoot == "" && os.Geteuid() != 0 && os.Getenv("MCPSANDBOX_LAYER_INNER") == "" {
		t.Skipf("SKIP: no transactional workspace here: %s", e.layerWhy)
	}
}

// An interpreter's writes reach the workspace only through the commit's checks, on both ways a
// call starts (direct and through the exec helper): a plain file lands, owned by the
// workspace's owner; a new .git with a hook, a symlink to /etc/shadow, a FIFO and a setuid file
// do not, and the result lists each; a file the host hard-linked into the workspace is hidden
// from the call, so its other name outside is neither read nor written. Red without the layer
// (mutant workspace-layer), without the commit's checks (workspace-commit-check) and without the
// hiding (hardlink-hide).
func TestWorkspaceLayerCommitsChecked(t *testing.T) {
	for _, viaHelper := range []bool{false, true} {
		name := "direct"
		if viaHelper {
			name = "helper"
		}
		t.Run(name, func(t *testing.T) {
			e := pythonExecutor(t, nil, viaHelper)
			needLayer(t, e)
			outside := filepath.Join(filepath.Dir(e.ws), "outside")
			os.Mkdir(outside, 0o755)
			secret := filepath.Join(outside, "secret")
			if err := os.WriteFile(secret, []byte("host secret\n"), 0o666); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(e.ws, "vendor"), 0o777)
			if err := os.Link(secret, filepath.Join(e.ws, "vendor", "link")); err != nil {
				t.Fatal(err)
			}
			res := runPython(t, e, `
import os
open('a.txt', 'w').write('hello\n')
os.makedirs('.git/hooks')
open('.git/hooks/pre-commit', 'w').write('#!/bin/sh\ntouch /tmp/pwned\n')
os.chmod('.git/hooks/pre-commit', 0o755)
os.symlink('/etc/shadow', 'shadow')
try:
    os.mkfifo('fifo')
    print('fifo made')
except OSError as e:
    print('fifo refused', e)  # the seccomp filter denies mknod here
open('suid', 'w').write('x')
os.chmod('suid', 0o4755)
for mode in ('r', 'r+'):
    try:
        with open('vendor/link', mode) as f:
            print(mode, 'opened', f.read() if mode == 'r' else f.write('overwritten\n'))
    except OSError as e:
        print(mode, 'refused', type(e).__name__)
`)
			if res.ExitCode != 0 {
				t.Fatalf("the call failed: %+v", res)
			}
			if b, err := os.ReadFile(filepath.Join(e.ws, "a.txt")); err != nil || string(b) != "hello\n" {
				t.Errorf("a.txt on the host: %q %v, want the call's file", b, err)
			}
			refused := refusedPaths(res.Workspace)
			check := []string{".git", "shadow", "suid"}
			if strings.Contains(res.Stdout, "fifo made") {
				check = append(check, "fifo")
			}
			for _, p := range check {
				if _, err := os.Lstat(filepath.Join(e.ws, p)); err == nil {
					t.Errorf("%s reached the workspace", p)
				}
				if refused[p] == "" {
					t.Errorf("%s is not listed as refused in the result: %+v", p, res.Workspace)
				}
			}
			if strings.Contains(res.Stdout, "opened") || !strings.Contains(res.Stdout, "r refused FileNotFoundError") {
				t.Errorf("the host-made hard link was opened by the call:\n%s", res.Stdout)
			}
			if b, _ := os.ReadFile(secret); string(b) != "host secret\n" {
				t.Errorf("the file outside was changed through its hard link: %q", b)
			}
			if st, err := os.Lstat(filepath.Join(e.ws, "vendor", "link")); err != nil || !st.Mode().IsRegular() {
				t.Errorf("the hidden link is gone from the workspace (hiding is not deleting): %v", err)
			}
		})
	}
}

// A call's writes past limits.workspace_quota stop the call and none of them reach the
// workspace; under the quota they all do. Red without the quota (mutant workspace-quota).
func TestWorkspaceLayerQuota(t *testing.T) {
	e := pythonExecutor(t, nil, false)
	needLayer(t, e)
	e.pol.Limits.WorkspaceQuota = 4 << 20
	res := runPython(t, e, `
import time
for i in range(24):
    with open('f%02d' % i, 'wb') as f:
        f.write(b'x' * (1 << 20))
    time.sleep(0.05)
`)
	var total int64
	ents, _ := os.ReadDir(e.ws)
	for _, d := range ents {
		if info, err := d.Info(); err == nil {
			total += info.Size()
		}
	}
	if total > 4<<20 {
		t.Fatalf("%d bytes reached the workspace, past the 4 MiB quota (%+v)", total, res.Workspace)
	}
	said := ""
	if res.Workspace != nil {
		said = res.Workspace.Discarded
		for _, r := range res.Workspace.Refused {
			said += " " + r.Why
		}
	}
	if !strings.Contains(said, "workspace_quota") {
		t.Errorf("the result does not say the quota held the call's writes: %+v", res.Workspace)
	}
}

// Bytes deeper than the watchdog's walk are not hidden from it: a call writing 64 MiB under
// 1,100 nested directories (the walk stopped at 1,024, so the quota never saw them and the
// call filled serve's disk until its timeout) is stopped as over the quota. Red with mutant
// workspace-layer-unmeasured.
func TestWorkspaceLayerQuotaDeep(t *testing.T) {
	e := pythonExecutor(t, nil, false)
	needLayer(t, e)
	e.pol.Limits.WorkspaceQuota = 16 << 20 // above what 1,100 directories cost (4 KiB each)
	start := time.Now()
	res := runPythonWithin(t, e, `
import os, time
for _ in range(1100):
    os.mkdir("d")
    os.chdir("d")
with open("fill", "wb") as f:
    f.truncate(64 << 20)
time.sleep(5)
print("not stopped")
`, 20*time.Second)
	if res.Workspace == nil || !strings.Contains(res.Workspace.Discarded, "workspace_quota") || strings.Contains(res.Stdout, "not stopped") {
		t.Fatalf("64 MiB under 1,100 directories was not stopped as over the 16 MiB quota after %s: %+v, output %q", time.Since(start), res.Workspace, res.Stdout+res.Stderr)
	}
}

func runPythonWithin(t *testing.T, e *Executor, code string, timeout time.Duration) *executor.Result {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"command": "python3", "args": []string{"-c", code}})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := e.run(ctx, executor.Call{Args: args, Timeout: timeout, MaxOutput: 64 << 10})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return res
}

// A call that times out leaves nothing in the workspace (limits.on_interrupt = "discard", the
// default: a half-done call's writes never land), and the result says why; with "commit" its
// writes land, checked like any.
func TestWorkspaceLayerInterrupted(t *testing.T) {
	e := pythonExecutor(t, nil, false)
	needLayer(t, e)
	code := "open('half.txt', 'w').write('half'); import time; time.sleep(30)"
	res := runPythonWithin(t, e, code, 3*time.Second)
	if !res.TimedOut {
		t.Fatalf("the call did not time out: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "half.txt")); err == nil {
		t.Errorf("a timed-out call's write reached the workspace under on_interrupt = discard")
	}
	if res.Workspace == nil || !strings.Contains(res.Workspace.Discarded, "timed out") {
		t.Errorf("the result does not say the writes were discarded: %+v", res.Workspace)
	}
	e.pol.Limits.OnInterrupt = "commit"
	res = runPythonWithin(t, e, code, 3*time.Second)
	if b, err := os.ReadFile(filepath.Join(e.ws, "half.txt")); err != nil || string(b) != "half" {
		t.Errorf("on_interrupt = commit: half.txt %q %v, want the timed-out call's write", b, err)
	}
	_ = res
}

// capsProbe prints the command's own capability sets (capget through ctypes): a non-root serve
// passes CAP_SYS_ADMIN and CAP_DAC_OVERRIDE to the helper for the call's mounts, and the
// command must hold none of them (it could unmount its layer in its own namespace).
const capsProbe = `
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
hdr = ctypes.create_string_buffer(struct.pack('Ii', 0x20080522, 0), 8)
data = ctypes.create_string_buffer(24)
if libc.capget(hdr, data) != 0:
    print('capget failed', ctypes.get_errno())
else:
    eff, prm, inh, eff2, prm2, inh2 = struct.unpack('6I', data.raw)
    print('caps eff=%x prm=%x' % (eff | eff2 << 32, prm | prm2 << 32))
`

// The command of a call holds no capability, whoever serve is (run as uid 65534 by
// TestWorkspaceLayerUnprivileged, where the helper is given some for its mounts). Red when the
// helper keeps them (mutant drop-caps).
func TestCommandHoldsNoCapabilities(t *testing.T) {
	for _, viaHelper := range []bool{false, true} {
		e := pythonExecutor(t, nil, viaHelper)
		res := runPython(t, e, capsProbe)
		if !strings.Contains(res.Stdout, "caps eff=0 prm=0") {
			t.Fatalf("the command's capabilities (through the exec helper: %v): %q %q, want none", viaHelper, res.Stdout, res.Stderr)
		}
	}
}

// A file-capped binary gains no capability at its exec from a call of a serve that is not root,
// with a mount namespace or without one (a host that gives a user namespace no mounts), started
// directly or through the exec helper: the child, which holds every capability of its user
// namespace until then, gives them up, and no_new_privs masks the file's (attack round atk26,
// F1: on the tier without mounts the command kept CAP_SYS_ADMIN and others). Run as uid 65534
// by TestWorkspaceLayerUnprivileged, with the capped copy of python it made. Red without the
// drop (mutant drop-caps).
func TestCappedBinaryGainsNoCapabilities(t *testing.T) {
	capped := os.Getenv("MCPSANDBOX_CAPPED_PYTHON")
	if capped == "" {
		t.Skip("run as uid 65534 by TestWorkspaceLayerUnprivileged")
	}
	defer func() { pythonExec.python, pythonExec.noMountNS = "", false }()
	pythonExec.python = capped
	for _, noMounts := range []bool{false, true} {
		for _, viaHelper := range []bool{false, true} {
			pythonExec.noMountNS = noMounts
			e := pythonExecutor(t, nil, viaHelper)
			if e.attr.has(unix.CLONE_NEWNS) == noMounts || !e.attr.userNS {
				t.Fatalf("namespaces %+v, want a user namespace, a mount namespace %v", e.attr, !noMounts)
			}
			res := runPython(t, e, capsProbe)
			if !strings.Contains(res.Stdout, "caps eff=0 prm=0") {
				t.Errorf("a file-capped python's capabilities (no mount namespace %v, through the exec helper %v): %q %q, want none",
					noMounts, viaHelper, res.Stdout, res.Stderr)
			}
		}
	}
}

// A serve that is not root starts its calls itself, as a root one does: the call's child clones
// into a new user namespace and maps serve's own uid and gid there, and no exec helper (a Go
// process per call) is started. Call after call: the child must leave serve's memory dumpable,
// or the next child could not write its own id maps (and would fall back to the helper), nor
// could serve start a helper at all (the helper's call at the end). Run as uid 65534 by
// TestWorkspaceLayerUnprivileged.
func TestUnprivilegedCallsStartDirect(t *testing.T) {
	if os.Getenv("MCPSANDBOX_LAYER_INNER") == "" {
		t.Skip("run as uid 65534 by TestWorkspaceLayerUnprivileged")
	}
	e := pythonExecutor(t, nil, false)
	if !e.attr.userNS || !e.directOK() {
		t.Fatalf("a serve that is not root: calls in a user namespace %v, started directly %v; want both", e.attr.userNS, e.directOK())
	}
	for i := 0; i < 3; i++ {
		res := runPython(t, e, `import os; print(os.getuid(), os.getgid(), os.getgroups())`)
		if want := "65534 65534 []"; strings.TrimSpace(res.Stdout) != want {
			t.Fatalf("call %d: %q %q, want %q", i, res.Stdout, res.Stderr, want)
		}
	}
	if e.userNSFails.Load() != 0 || !e.directOK() {
		t.Fatal("the direct start's user namespace was refused: calls went through the exec helper")
	}
	if n := len(e.warm); n != 0 {
		t.Errorf("%d warm exec helper(s) started for calls that start directly", n)
	}
	h := pythonExecutor(t, nil, true)
	if res := runPython(t, h, `print("helper")`); strings.TrimSpace(res.Stdout) != "helper" {
		t.Fatalf("a call through the exec helper after direct ones: %+v", res)
	}
}

// A direct start whose user namespace fails (here: the child finds no id maps to write) has its
// call done through the exec helper. One such failure turns nothing off (a process of serve's
// uid can cause one by writing the child's maps first, attack round atk26, F2): a direct start
// that works clears the count. Three in a row turn direct starts off for a minute, said once in
// serve's log; after it they are tried again. Run as uid 65534 by TestWorkspaceLayerUnprivileged.
func TestUnprivilegedDirectRefusedGoesToHelper(t *testing.T) {
	if os.Getenv("MCPSANDBOX_LAYER_INNER") == "" {
		t.Skip("run as uid 65534 by TestWorkspaceLayerUnprivileged")
	}
	var log testenv.LockedBuffer
	pythonExec.log = slog.New(slog.NewTextHandler(&log, nil))
	e := pythonExecutor(t, nil, false)
	pythonExec.log = nil
	defer func(d string) { idMapDir = d }(idMapDir)
	call := func(i int) {
		t.Helper()
		if res := runPython(t, e, `print("ran")`); strings.TrimSpace(res.Stdout) != "ran" {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	idMapDir = "/nonexistent"
	call(0)
	idMapDir = "/proc/self"
	call(1)
	if n := e.userNSFails.Load(); n != 0 || !e.directOK() {
		t.Fatalf("after one failure and a direct start that worked: %d failures counted, direct %v", n, e.directOK())
	}
	idMapDir = "/nonexistent"
	for i := 2; i < 6; i++ {
		call(i)
	}
	if e.directOK() {
		t.Fatal("calls still start directly after three failed in a row")
	}
	const said = "refused a direct start's user namespace"
	if n := strings.Count(log.String(), said); n != 1 {
		t.Errorf("serve's log says so %d times, want once:\n%s", n, log.String())
	}
	idMapDir = "/proc/self"
	e.userNSOffUntil.Store(time.Now().UnixNano()) // the minute is over
	call(6)
	if !e.directOK() || e.userNSFails.Load() != 0 {
		t.Errorf("direct starts not back after the pause: direct %v, %d failures counted", e.directOK(), e.userNSFails.Load())
	}
}

// A serve that is not root gets the transactional workspace too (a mount namespace of its user
// namespace's own, overlayfs with userxattr): TestWorkspaceLayerCommitsChecked and
// TestCommandHoldsNoCapabilities again as uid 65534 (this test binary, copied where that uid can
// run it). Root only: it is root that can switch.
func TestWorkspaceLayerUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: the layer tests themselves run unprivileged here")
	}
	if os.Getenv("MCPSANDBOX_LAYER_INNER") != "" {
		t.Skip("already the unprivileged run")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-layer-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	bin := filepath.Join(dir, "allowlist.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	capped := cappedPython(t)
	cmd := exec.Command(bin, "-test.run", "^(TestWorkspaceLayerCommitsChecked|TestCommandHoldsNoCapabilities|TestUnprivilegedCallsStartDirect|TestUnprivilegedDirectRefusedGoesToHelper|TestCappedBinaryGainsNoCapabilities|TestDeletionWhileRunningNeverSilent|TestOwnRenameNotRestored|TestRewriteWithRemovedTwinNeverSilent)$", "-test.v", "-test.count", "1")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir, "PATH=/usr/bin:/bin", "MCPSANDBOX_LAYER_INNER=1", "MCPSANDBOX_MUTANT=" + os.Getenv("MCPSANDBOX_MUTANT"), "MCPSANDBOX_CAPPED_PYTHON=" + capped}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "SKIP: no transactional workspace here") {
		t.Skipf("SKIP: no user namespaces with mounts for uid 65534 on this host: %s", out)
	}
	if err != nil || strings.Count(string(out), "--- PASS: Test") < 8 || strings.Contains(string(out), "--- SKIP") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	t.Logf("as uid 65534:\n%s", out)
}

// cappedPython copies python3 into a directory of the test's, root's and not writable by others
// (a pinned binary's place must be), with file capabilities (security.capability, revision 2,
// effective): CAP_DAC_OVERRIDE, CAP_KILL, CAP_NET_RAW, CAP_SYS_PTRACE, CAP_SYS_ADMIN.
func cappedPython(t *testing.T) string {
	t.Helper()
	src, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skipf("no python3: %v", err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-capped-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	py := filepath.Join(dir, "python3")
	if err := os.WriteFile(py, b, 0o755); err != nil {
		t.Fatal(err)
	}
	caps := uint32(1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_KILL | 1<<unix.CAP_NET_RAW | 1<<unix.CAP_SYS_PTRACE | 1<<unix.CAP_SYS_ADMIN)
	var v [20]byte
	binary.LittleEndian.PutUint32(v[0:], 0x02000000|1) // VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
	binary.LittleEndian.PutUint32(v[4:], caps)         // permitted, low word
	if err := unix.Setxattr(py, "security.capability", v[:], 0); err != nil {
		t.Fatalf("set file capabilities on %s: %v", py, err)
	}
	return py
}

// fallocate takes disk without writing it: 12-24 GiB of the layers' disk in 0.4 s, far past
// workspace_quota before its watchdog looks (attack round atk32, F7). A command's fallocate
// gets EOPNOTSUPP, with and without FALLOC_FL_KEEP_SIZE, and posix_fallocate then writes the
// bytes, as on a file system without it: a program that asks for space still gets it, at the
// speed of writing, which the quota's watchdog bounds. Red with mutant seccomp-fallocate.
func TestCommandsCannotFallocate(t *testing.T) {
	for _, viaHelper := range []bool{false, true} {
		e := pythonExecutor(t, nil, viaHelper)
		res := runPython(t, e, `
import ctypes, ctypes.util, os
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open("f", os.O_CREAT | os.O_WRONLY, 0o644)
for mode in (0, 1):
    r = libc.fallocate(fd, mode, 0, 1 << 20)
    print("fallocate", mode, r, ctypes.get_errno())
os.posix_fallocate(fd, 0, 1 << 16)
print("posix_fallocate", os.fstat(fd).st_size)
`)
		for _, want := range []string{"fallocate 0 -1 95", "fallocate 1 -1 95", "posix_fallocate 65536"} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("viaHelper=%v: want %q in %q %q", viaHelper, want, res.Stdout, res.Stderr)
			}
		}
	}
}
