package sandbox

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"golang.org/x/sys/unix"
)

// A file the call reads, inside a directory it reads, both under the host's /tmp: the directory
// is bound back on top of the call's private /tmp with the file in it, and nothing reaches
// through that bind to the host's file. Making a mount point for the file there opened the
// host's file for writing; a FIFO in its place made that open wait forever, and the direct
// start's child then held serve's thread (serve froze at its next garbage collection). Seen
// from the call: the file is there and is no mount point of its own; from the host: nothing
// opened it for writing (inotify). Both ways of starting a command, and the mount namespaces
// prepared ahead of calls.
func TestKeptDirsFilesNotBoundAgain(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the private /tmp needs a mount namespace: root")
	}
	// The files are written and watched before any executor runs: a fork meanwhile (a warm
	// helper's start, a prepared namespace) holds a copy of the writer's descriptor and closes it
	// at its exec or exit, which inotify reports as a close after writing.
	type target struct {
		root, file string
		in         int
	}
	var targets [2]target
	for i := range targets {
		root := t.TempDir()
		if !strings.HasPrefix(root, "/tmp/") {
			t.Skipf("the test's directory %s is not under /tmp (TMPDIR is set): nothing is bound back", root)
		}
		os.Chmod(root, 0o755)
		os.Mkdir(filepath.Join(root, "sub"), 0o755)
		file := filepath.Join(root, "sub", "file")
		if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(in)
		if _, err := unix.InotifyAddWatch(in, file, unix.IN_CLOSE_WRITE|unix.IN_MODIFY); err != nil {
			t.Fatal(err)
		}
		targets[i] = target{root, file, in}
	}
	for i, viaHelper := range []bool{false, true} {
		root, file, in := targets[i].root, targets[i].file, targets[i].in
		e := pythonExecutor(t, nil, viaHelper)
		e.al.ReadPaths = append(e.al.ReadPaths, root, file)
		// The command's mount table is read from the host while it sleeps (Landlock keeps
		// /proc/self/mountinfo from the command), found by a marker in its arguments.
		marker := fmt.Sprintf("keptdirs-%d-%v", os.Getpid(), viaHelper)
		prog := fmt.Sprintf("import os, time; print(os.path.exists(%q)); time.sleep(1)", file)
		args, _ := json.Marshal(map[string]any{"command": "python3", "args": []string{"-c", prog, marker}})
		for i := range 4 {
			found := make(chan []string, 1)
			go func() { found <- mountPointsOf(marker, 5*time.Second) }()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			res, err := e.run(ctx, executor.Call{Args: args, Timeout: 10 * time.Second, MaxOutput: 64 << 10})
			cancel()
			if err != nil || res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "True" {
				t.Fatalf("helper=%v call %d: %v %+v (want the file visible through its directory)", viaHelper, i, err, res)
			}
			mps := <-found
			if mps == nil {
				t.Fatalf("helper=%v call %d: the command's process was not found by its marker", viaHelper, i)
			}
			if !slices.Contains(mps, filepath.Join(root)) {
				t.Fatalf("helper=%v call %d: %s is not bound back in the call (control): %v", viaHelper, i, root, mps)
			}
			if slices.Contains(mps, file) {
				t.Errorf("helper=%v call %d: %s is a mount point of its own in the call, bound again inside its directory's bind", viaHelper, i, file)
			}
			time.Sleep(50 * time.Millisecond) // the next call's namespace is prepared meanwhile
		}
		e.Close()
		buf := make([]byte, 4096)
		if n, _ := unix.Read(in, buf); n >= unix.SizeofInotifyEvent {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
			t.Errorf("helper=%v: a call's setup opened the host's %s for writing (through its directory's bind): inotify mask %#x", viaHelper, file, ev.Mask)
		}
	}
}

// The direct start's child (and the child that prepares a mount namespace) is killed if its
// setup has not finished by its deadline. Here the preparing child's hand-over blocks: the
// socket it sends the namespace on has a full queue. Run in a process of its own: without the
// deadline that process's Go runtime freezes (the waiting thread holds its scheduler slot), and
// the test would freeze with it.
func TestChildSetupDeadline(t *testing.T) {
	if os.Getenv("MCPSANDBOX_TEST_STUCK_CHILD") == "1" {
		stuckChild(t)
		return
	}
	if !directArch {
		t.Skip("the direct start exists on amd64 only")
	}
	// 15 s: the stopped child's run takes about a second; a stuck one waits out the limit
	out, stuck, err := runIsolated(t, "^TestChildSetupDeadline$", "MCPSANDBOX_TEST_STUCK_CHILD=1", 15*time.Second)
	if stuck != 0 {
		t.Fatalf("a child stuck in its setup was not stopped: its parent was still waiting after %s\n%s", stuck, out)
	}
	if err != nil || !strings.Contains(string(out), "stuck child: killed by its deadline") {
		t.Fatalf("the stuck child's run: %v\n%s", err, out)
	}
}

// stuckChild starts a preparing child whose send blocks, and reports how it ended.
func stuckChild(t *testing.T) {
	childSetupLimit = 300 * time.Millisecond
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for { // fill the receiver's queue: the child's (blocking) send then waits
		if _, err := unix.SendmsgN(pair[1], []byte{0}, nil, nil, unix.MSG_DONTWAIT); err != nil {
			break
		}
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := preparePlan(int(stW.Fd()), pair[1])
	start := time.Now()
	pid, errno := rawStart(p)
	took := time.Since(start)
	if errno != 0 {
		t.Fatal(errno)
	}
	stW.Close()
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, 0, nil)
	status := make([]byte, 16)
	n, _ := stR.Read(status)
	if p.stuck(took, ws, status[:n]) {
		t.Logf("stuck child: killed by its deadline after %s", took.Round(time.Millisecond))
	} else {
		t.Errorf("stuck child: ended with %v after %s, report %q", ws, took, status[:n])
	}
}

// mountPointsOf finds the process whose arguments include marker and returns its mount points
// (nil if none showed up within d).
func mountPointsOf(marker string, d time.Duration) []string {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
		for _, c := range procs {
			b, err := os.ReadFile(c)
			if err != nil || !slices.Contains(strings.Split(string(b), "\x00"), marker) {
				continue
			}
			mi, err := os.ReadFile(filepath.Join(filepath.Dir(c), "mountinfo"))
			if err != nil {
				continue
			}
			var mps []string
			for _, l := range strings.Split(string(mi), "\n") {
				if f := strings.Fields(l); len(f) > 4 {
					mps = append(mps, f[4])
				}
			}
			return mps
		}
	}
	return nil
}

// A call whose mount list cannot be made (a path it looks up is on a file system that does not
// answer: here a FUSE mount whose server never reads its requests) fails within the setup's
// deadline, with the error that says so, and serve goes on: its garbage collector runs, the
// next call runs. The call's child is the init of its PID namespace, which the kernel does not
// let the deadline's SIGKILL stop (attack round atk23, F1), and a child of serve's vfork stalls
// its garbage collection while it waits (F2): the exec helper makes the list, and serve kills it
// at the deadline. Run in a process of its own, as TestChildSetupDeadline: a child stuck for good freezes it.
func TestCallMountListDeadline(t *testing.T) {
	if d := os.Getenv("MCPSANDBOX_TEST_STUCK_MOUNTS"); d != "" {
		stuckMounts(t, d)
		return
	}
	if !directArch {
		t.Skip("the direct start exists on amd64 only")
	}
	if os.Geteuid() != 0 {
		t.Skip("the direct start and a FUSE mount need root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no /dev/fuse: %v", err)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	mnt := filepath.Join(dir, "fuse")
	os.Mkdir(mnt, 0o755)
	// Mounted here, its server's descriptor held here only (close-on-exec): a child stuck on it
	// in the test's process would hold a copy, and its close would not end the connection.
	fuse, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("open /dev/fuse: %v", err)
	}
	if err := unix.Mount("mcpsandbox-test", mnt, "fuse", unix.MS_NOSUID|unix.MS_NODEV,
		fmt.Sprintf("fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fuse.Fd())); err != nil {
		fuse.Close()
		t.Skipf("mount a FUSE file system: %v", err)
	}
	stop := serveFUSEUnanswered(t, fuse)
	abort := sync.OnceFunc(func() {
		stop()
		fuse.Close() // ends the connection: whatever waits on it gets an error
		unix.Unmount(mnt, unix.MNT_DETACH)
	})
	t.Cleanup(abort)
	// A process the kernel holds in the server's unanswered lookup cannot be killed, so a run
	// stuck that way (a mechanism switched off) cannot be ended by its timeout: the connection's
	// end ends it.
	// 30 s: the run's calls take about 5 s (12 s is the most one call may); a frozen run waits
	// out the limit, and a mutant's catch costs it
	time.AfterFunc(35*time.Second, abort)
	out, stuck, err := runIsolated(t, "^TestCallMountListDeadline$", "MCPSANDBOX_TEST_STUCK_MOUNTS="+mnt, 30*time.Second)
	if stuck != 0 {
		t.Fatalf("a call whose mount list waits for good froze its serve: still waiting after %s\n%s", stuck, out)
	}
	if err != nil || !strings.Contains(string(out), "stuck mounts: stopped by the deadline") {
		t.Fatalf("the stuck mount list's run: %v\n%s", err, out)
	}
}

// serveFUSEUnanswered serves the FUSE connection fuse as a daemon hung on its backend does
// (sshfs on a dead link, say): it answers the set-up (INIT), the root's attributes and statfs,
// reads every lookup and answers none. The kernel waits for a request its server has read in an
// uninterruptible wait, which SIGKILL does not end (attack round atk24, F2). stop ends the server,
// after which closing fuse aborts the connection.
func serveFUSEUnanswered(t *testing.T, fuse *os.File) (stop func()) {
	t.Helper()
	fd := int(fuse.Fd())
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	var quit atomic.Bool
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		buf := make([]byte, 1<<17)
		le := binary.LittleEndian
		for !quit.Load() {
			n, err := unix.Read(fd, buf)
			if err == unix.EAGAIN || err == unix.EINTR {
				unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 50)
				continue
			}
			if err != nil || n < 40 {
				return
			}
			op, unique, node := le.Uint32(buf[4:]), le.Uint64(buf[8:]), le.Uint64(buf[16:])
			reply := func(errno int32, body []byte) {
				out := make([]byte, 16+len(body))
				le.PutUint32(out[0:], uint32(len(out)))
				le.PutUint32(out[4:], uint32(errno))
				le.PutUint64(out[8:], unique)
				copy(out[16:], body)
				unix.Write(fd, out)
			}
			switch op {
			case 26: // INIT: protocol 7.31, max_write 4096
				body := make([]byte, 64)
				le.PutUint32(body[0:], 7)
				le.PutUint32(body[4:], 31)
				le.PutUint32(body[20:], 4096)
				reply(0, body)
			case 3: // GETATTR: a directory
				body := make([]byte, 104)
				le.PutUint64(body[16:], node)
				le.PutUint32(body[16+60:], unix.S_IFDIR|0o755)
				le.PutUint32(body[16+64:], 2)
				reply(0, body)
			case 17: // STATFS
				body := make([]byte, 80)
				le.PutUint32(body[40:], 4096)
				le.PutUint32(body[44:], 255)
				reply(0, body)
			case 1: // LOOKUP: read, never answered
			default:
				reply(-int32(unix.ENOSYS), nil)
			}
		}
	}()
	return func() {
		quit.Store(true)
		<-ended
	}
}

// stuckMounts has every call's setup look a path up on mnt, a FUSE file system that never
// answers (a read path there), and runs calls: such a setup is made by the exec helper, which serve
// kills from outside at the setup's deadline, while serve's garbage collection (and so every
// other session) goes on; made in serve's own vfork child, it held serve's scheduler slot, and a
// collection waited for the deadline (attack round atk23, F2).
func stuckMounts(t *testing.T, mnt string) {
	childSetupLimit, helperSetupLimit, killGrace = 2*time.Second, 2*time.Second, time.Second
	e := pythonExecutor(t, nil, false)
	if !e.directOK() || !e.attr.has(unix.CLONE_NEWNS) {
		t.Skip("no direct start with a mount namespace here")
	}
	e.unprepared = true
	waits := filepath.Join(mnt, "waits")
	e.testReadFiles = []string{waits}
	args, _ := json.Marshal(map[string]any{"command": "python3", "args": []string{"-c", "print('ran')"}})
	var gcMax atomic.Int64
	gcDone := make(chan struct{})
	go func() { // a garbage collection all along: it needs every thread's scheduler slot
		for {
			select {
			case <-gcDone:
				return
			default:
				start := time.Now()
				runtime.GC()
				if d := int64(time.Since(start)); d > gcMax.Load() {
					gcMax.Store(d)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}()
	defer close(gcDone)
	// call runs one call, and gives up on it after 8 s (a call stuck in serve's own lookup).
	call := func(timeout time.Duration) (*executor.Result, time.Duration, error) {
		t.Helper()
		type out struct {
			res *executor.Result
			err error
		}
		ch := make(chan out, 1)
		start := time.Now()
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			res, err := e.run(ctx, executor.Call{Args: args, Timeout: timeout, MaxOutput: 64 << 10})
			ch <- out{res, err}
		}()
		select {
		case o := <-ch:
			return o.res, time.Since(start), o.err
		case <-time.After(12 * time.Second):
			t.Fatalf("a call whose setup looks up %s had not ended after 12 s (its setup's deadline is %s)", waits, helperSetupLimit)
			return nil, 0, nil
		}
	}
	res, took, err := call(10 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "did not finish within") {
		t.Fatalf("a call whose setup waits: %v %+v after %s (want the setup's deadline error)", err, res, took)
	}
	// The deadline, two looks at the helper setupRecheck apart, and killGrace: the kernel holds
	// the helper (its lookup was read by the server), so SIGKILL does not end it, and the call
	// does not wait for it.
	if limit := helperSetupLimit + 2*setupRecheck + killGrace + 3*time.Second; took > limit {
		t.Errorf("the call ended after %s, not at its setup's deadline (%s, at most %s)", took, helperSetupLimit, limit)
	}
	if g := time.Duration(gcMax.Load()); g > childSetupLimit/2 {
		t.Errorf("serve's garbage collection waited %s while the call's setup waited (every session waits with it)", g)
	}
	t.Logf("stuck mounts: stopped by the deadline after %s, the longest garbage collection meanwhile %s: %v",
		took.Round(time.Millisecond), time.Duration(gcMax.Load()).Round(time.Millisecond), err)
	// A call whose own timeout comes first ends at it, not at the setup's deadline: as stuck if
	// its helper was blocked then, else (still starting, on a loaded machine) as timed out.
	res, took, err = call(300 * time.Millisecond)
	if err == nil && (res == nil || !res.TimedOut) || took > 300*time.Millisecond+killGrace+2*time.Second {
		t.Errorf("a call with a 300ms timeout whose setup waits: %v %+v after %s (want its end at its timeout)", err, res, took)
	} else {
		t.Logf("short call: ended after %s: %v", took.Round(time.Millisecond), err)
	}
	// Nor is such a mount list made ahead of a call, by serve's vfork child.
	prepared := make(chan *preparedMounts, 1)
	go func() {
		prepared <- e.newPrepared(helper.Spec{Dir: e.ws, Mounts: true, RWDirs: []string{e.ws, "/tmp"}, ReadFiles: []string{waits}})
	}()
	select {
	case pm := <-prepared:
		if pm != nil {
			t.Errorf("a mount namespace whose list looks up %s was made ahead of a call", waits)
			pm.drop(true)
		}
	case <-time.After(3 * time.Second):
		t.Fatalf("making a mount namespace ahead of a call looked up %s, and waits", waits)
	}
	held := e.held.Load()
	if held < 1 || held > 2 {
		t.Errorf("%d killed helpers counted as not ended, want the first call's (and the short call's, if it reached the lookup)", held)
	}
	e.testReadFiles = nil
	res, _, err = call(10 * time.Second)
	if err != nil || strings.TrimSpace(res.Stdout) != "ran" {
		t.Errorf("the next call: %v %+v", err, res)
	}
	// Past maxHeld such processes, calls are refused until they end: the kernel's holds do not
	// pile up one per call.
	maxHeld = max(held, 1)
	res, took, err = call(10 * time.Second)
	if err == nil || !strings.Contains(err.Error(), "uninterruptible") || took > time.Second {
		t.Errorf("a call with %d killed processes not ended: %v %+v after %s (want it refused at once)", e.held.Load(), err, res, took)
	}
}

// runIsolated runs test run of this binary in a process of its own with env added, and kills
// it, and whatever it started, after limit: stuck is how long it had run then (0: it ended).
// Its own process group, killed whole: a stuck child outlives its parent otherwise (it holds
// its socket's ends and the output pipes).
func runIsolated(t *testing.T, run, env string, limit time.Duration) (out []byte, stuck time.Duration, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	defer func() {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	start := time.Now()
	out, err = cmd.CombinedOutput()
	if ctx.Err() != nil {
		stuck = time.Since(start).Round(time.Second)
	}
	return out, stuck, err
}

// An exec helper still at its setup when the deadline comes is stuck only if it is blocked and
// has used no CPU at two looks in a row: one that is runnable or working is slow (a loaded
// machine; a warm helper started at the lowest priority), and its call must not fail as if a
// file system did not answer (attack round atk24, F3). Here every helper meets a deadline of
// 1 ns, ahead of its exec: at 1 ms, a fast machine's warm helper had exec'd before the deadline
// in each of the 8 calls, and the mutant switching the looks off survived (the landing CI of
// session 48).
func TestHelperSetupSlowNotStuck(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(wcPolicy(t), Options{HelperPath: exe, viaHelper: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	old := helperSetupLimit
	helperSetupLimit = time.Nanosecond
	defer func() { helperSetupLimit = old }()
	args, _ := json.Marshal(map[string]any{"command": "wc", "args": []string{"f"}})
	for i := range 8 {
		res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 10 * time.Second, MaxOutput: 64 << 10})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("call %d, its helper met the deadline mid-setup: %v %+v", i, err, res)
		}
	}
}
