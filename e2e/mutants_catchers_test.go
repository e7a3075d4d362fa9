package e2e

// Catchers for mutants (mutants/mutants.toml) that no other test caught: each attacks one
// mechanism through a real client and judges from outside the sandbox (the host's view of files,
// /proc, or what the client was sent). Each also passes against the release build.

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A same-size, in-place edit of a pinned binary keeps its inode and size; only mtime and ctime
// change. The hash cache must notice (mutant hash-cache-key).
func TestSameSizeEditRefused(t *testing.T) {
	var copyPath string
	f := newFixture(t, func(p *policy.Policy, f *fixture) {
		dir := mkdir(t, f.root, "bin", 0o755)
		copyPath = filepath.Join(dir, "wc")
		b, _ := os.ReadFile("/usr/bin/wc")
		write(t, copyPath, string(b), 0o755)
		c, err := generate.Pin(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		c.Name = "wc2"
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	})
	if res, r := f.call("wc2", "-l", "notes.txt"); res.IsError || r.ExitCode != 0 {
		t.Fatalf("pinned copy does not run: %s", text(res))
	}
	before, _ := os.Stat(copyPath)
	// Flip the last byte (section header table: the binary still runs) without truncating.
	fh, err := os.OpenFile(copyPath, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := make([]byte, 1)
	fh.ReadAt(last, before.Size()-1)
	last[0] ^= 0xff
	if _, err := fh.WriteAt(last, before.Size()-1); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	after, _ := os.Stat(copyPath)
	if after.Size() != before.Size() || !os.SameFile(before, after) {
		t.Fatal("the edit changed the size or the file: not the case under test")
	}
	res, _ := f.call("wc2", "-l", "notes.txt")
	if !res.IsError || !strings.Contains(text(res), "sha256") {
		t.Fatalf("same-size in-place edit of a pinned binary not refused: %s", text(res))
	}
}

// A program the command writes into the workspace cannot be executed (mutant landlock-exec).
// The detector: a marker file the program would create, seen from the host.
func TestWorkspaceProgramNotExecuted(t *testing.T) {
	f := newFixture(t, nil)
	b, _ := os.ReadFile("/usr/bin/touch")
	write(t, filepath.Join(f.ws, "mytouch"), string(b), 0o755)
	_, r := f.py(`
import os
try:
    os.execv('./mytouch', ['mytouch', 'EXECUTED'])
except Exception as e:
    print('ERR', type(e).__name__, e)
`)
	if _, err := os.Stat(filepath.Join(f.ws, "EXECUTED")); err == nil {
		t.Fatalf("a binary written into the workspace was executed: %s %s", r.Stdout, r.Stderr)
	}
	if !strings.Contains(r.Stdout, "PermissionError") {
		t.Fatalf("exec from the workspace did not fail with a permission error: %q %q", r.Stdout, r.Stderr)
	}
	// Control: the same file run by the host does create the marker.
	if err := runHost(filepath.Join(f.ws, "mytouch"), filepath.Join(f.ws, "EXECUTED")); err != nil {
		t.Fatalf("control: the host cannot run the copy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "EXECUTED")); err != nil {
		t.Fatal("control: the marker detector does not see the marker")
	}
}

// Reading a file outside the workspace (by plain permissions readable) fails (mutant
// landlock-read): the client never receives the canary's nonce.
func TestReadOutsideDenied(t *testing.T) {
	f := newFixture(t, nil)
	res, r := f.py(fmt.Sprintf(`
for p in [%q, %q]:
    try: print(open(p).read())
    except Exception as e: print('ERR', type(e).__name__)
`, filepath.Join(f.outside, "canary.txt"), filepath.Join(f.home, ".ssh", "id_rsa")))
	if f.leaked(text(res)) || f.leaked(r.Stdout) {
		t.Fatalf("a file outside the workspace was read: %s", r.Stdout)
	}
	if strings.Count(r.Stdout, "ERR PermissionError") != 2 {
		t.Fatalf("reads outside did not fail with a permission error: %q", r.Stdout)
	}
}

// A background child (same process group, no setsid) of a command that exits must not outlive
// the call. With a PID namespace it dies with the namespace; without one (mutant pidns, the
// control of group-kill) the process-group kill ends it.
func TestBackgroundChildEnds(t *testing.T) {
	f := newFixture(t, nil)
	_, r := f.py("import os,time\nif os.fork()==0:\n    time.sleep(60)\n    os._exit(0)\nprint('parent done')")
	if !strings.Contains(r.Stdout, "parent done") {
		t.Fatalf("command did not run: %+v", r)
	}
	if s := survivors(f.tag); len(s) > 0 {
		t.Fatalf("a background child outlived its call: pids %v", s)
	}
}

// The limits every command runs under, read by the host from /proc/PID/limits of the running
// command (mutants rlimit-*): what the kernel enforces, not what serve says.
func TestLimitsSeenFromOutside(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { p.Limits.Pids = 40 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.py("import time\ntime.sleep(2.5)")
	}()
	var pid string
	deadline := time.Now().Add(10 * time.Second)
	for pid == "" && time.Now().Before(deadline) {
		if ps := procsWith(f.tag); len(ps) > 0 {
			pid = ps[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == "" {
		t.Fatal("the command never started")
	}
	b, err := os.ReadFile("/proc/" + pid + "/limits")
	<-done
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{
		"Max cpu time":       uint64(f.pol.Limits.Timeout.Seconds()) + 1,
		"Max address space":  uint64(f.pol.Limits.Memory),
		"Max file size":      uint64(alsec.Of(f.pol).MaxFileSize),
		"Max open files":     256,
		"Max processes":      40,
		"Max core file size": 0,
	}
	if os.Geteuid() != 0 {
		delete(want, "Max processes") // per uid: set only for a uid the commands have to themselves
	}
	for _, line := range strings.Split(string(b), "\n") {
		for name, v := range want {
			if !strings.HasPrefix(line, name+" ") {
				continue
			}
			fields := strings.Fields(strings.TrimPrefix(line, name))
			got, err := strconv.ParseUint(fields[0], 10, 64)
			if err != nil || got != v {
				t.Errorf("%s: the kernel holds %q for the command, want %d", name, fields[0], v)
			}
			delete(want, name)
		}
	}
	for name := range want {
		t.Errorf("%s missing from /proc/%s/limits", name, pid)
	}
}

// A file larger than allowlist.max_file_size is cut at the limit (mutant rlimit-fsize), as the
// host sees the file.
func TestFileSizeCapped(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { alsec.Of(p).MaxFileSize = 1 << 20 })
	f.py("import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\nwith open('big', 'wb') as fh:\n    for i in range(4):\n        try: fh.write(b'x' * (1 << 20)); fh.flush()\n        except OSError as e: print('ERR', e); break")
	st, err := os.Stat(filepath.Join(f.ws, "big"))
	if err != nil {
		t.Fatalf("the command wrote nothing: %v", err)
	}
	if st.Size() > 1<<20 {
		t.Fatalf("a file of %d bytes was written; max_file_size is %d", st.Size(), 1<<20)
	}
}

// Memory beyond limits.memory cannot be had (mutant rlimit-as): mapping 1 GiB of address space
// (untouched, so it costs nothing when allowed) fails, as the client sees it.
func TestMemoryCapped(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { p.Limits.Memory = 128 << 20 })
	res, r := f.py("import mmap\ntry:\n    m = mmap.mmap(-1, 1 << 30)\n    print('ALLOCATED', len(m))\nexcept OSError as e:\n    print('ERR', e.errno)")
	if strings.Contains(r.Stdout, "ALLOCATED") {
		t.Fatalf("a command mapped 1 GiB under a 128 MiB limit: %s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "ERR 12") { // ENOMEM
		t.Fatalf("mapping 1 GiB did not fail with ENOMEM: %s", text(res))
	}
}

// A fork bomb is held to limits.pids processes, counted by the host in /proc while the bomb's
// children wait (mutant rlimit-nproc).
func TestForkBombCounted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("not root: RLIMIT_NPROC counts the server's own uid too")
	}
	f := newFixture(t, func(p *policy.Policy, _ *fixture) {
		p.Limits.Pids = 16
		p.Limits.Timeout = policy.Duration{Duration: 6 * time.Second}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.py("import os,time\nn=0\nfor i in range(60):\n    try:\n        if os.fork()==0:\n            time.sleep(3); os._exit(0)\n        n+=1\n    except OSError: break\nprint('forked', n)\ntime.sleep(3)")
	}()
	peak := 0
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		if n := len(procsWith(f.tag)); n > peak {
			peak = n
		}
		select {
		case <-done:
			deadline = time.Now()
		default:
			time.Sleep(50 * time.Millisecond)
		}
	}
	<-done
	if peak == 0 {
		t.Fatal("the command never started")
	}
	if peak > 16 {
		t.Fatalf("the host counted %d processes of the command; limits.pids is 16", peak)
	}
}

func runHost(bin string, args ...string) error {
	p, err := os.StartProcess(bin, append([]string{bin}, args...), &os.ProcAttr{Files: []*os.File{nil, nil, nil}})
	if err != nil {
		return err
	}
	_, err = p.Wait()
	return err
}
