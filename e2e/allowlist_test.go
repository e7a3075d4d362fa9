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

	"github.com/mcpsandbox/mcpsandbox/generate"
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
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "run_allowed_command" {
		t.Fatalf("tools/list = %+v, %v", tools, err)
	}
	if a := tools.Tools[0].Annotations; a == nil || a.ReadOnlyHint || a.OpenWorldHint == nil || *a.OpenWorldHint {
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

// A pinned binary swapped after the server started is refused, both rewritten in place and
// replaced by rename.
func TestSwappedBinaryRefused(t *testing.T) {
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
		p.Allowlist.Commands = append(p.Allowlist.Commands, c)
	})
	if res, r := f.call("wc2", "-l", "notes.txt"); res.IsError || r.ExitCode != 0 {
		t.Fatalf("pinned copy does not run: %s", text(res))
	}
	other, _ := os.ReadFile("/usr/bin/head")
	write(t, copyPath, string(other), 0o755) // in place
	res, _ := f.call("wc2", "-l", "notes.txt")
	if !res.IsError || !strings.Contains(text(res), "sha256") {
		t.Fatalf("in-place swap not refused: %s", text(res))
	}
	orig, _ := os.ReadFile("/usr/bin/wc")
	write(t, copyPath, string(orig), 0o755)
	if res, _ := f.call("wc2", "notes.txt"); res.IsError {
		t.Fatalf("restored binary refused: %s", text(res))
	}
	tmp := copyPath + ".new"
	write(t, tmp, string(other), 0o755)
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
		res, r := f.py(`
import os
while True:
    try: os.fork()
    except OSError: pass
`)
		if res.IsError {
			t.Fatalf("call error: %s", text(res))
		}
		if !r.TimedOut && r.ExitCode == 0 {
			t.Errorf("fork bomb finished cleanly? %+v", r)
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
`, f.tcpPort))
		if strings.Contains(r.Stdout, "CONNECTED") || f.tcpAccepts.Load() != 0 {
			t.Fatalf("TCP reached the listener: %s (accepts %d)", r.Stdout, f.tcpAccepts.Load())
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
`, f.udpPort))
		time.Sleep(200 * time.Millisecond)
		if f.udpPkts.Load() != 0 {
			t.Fatalf("UDP reached the listener: %s (%d packets)", r.Stdout, f.udpPkts.Load())
		}
	})
	t.Run("dns lookup", func(t *testing.T) {
		_, r := f.py(`
import socket
try: print('RESOLVED', socket.getaddrinfo('example.com', 80))
except Exception as e: print('ERR', e)
`)
		if strings.Contains(r.Stdout, "RESOLVED") {
			t.Fatalf("DNS worked: %s", r.Stdout)
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
		_, r := f.py(`
import os, ctypes
libc = ctypes.CDLL(None, use_errno=True)
print('uid', os.getuid(), os.geteuid())
for name, fn in [('setuid0', lambda: os.setuid(0)), ('unshare', lambda: os.unshare(os.CLONE_NEWUSER) if hasattr(os, 'unshare') else libc.unshare(0x10000000) and (_ for _ in ()).throw(OSError(ctypes.get_errno(), 'unshare'))),
                 ('ptrace', lambda: libc.ptrace(16, 1, 0, 0) == 0 or (_ for _ in ()).throw(OSError(ctypes.get_errno(), 'ptrace'))),
                 ('mknod', lambda: os.mknod('dev0', 0o600 | 0o020000, os.makedev(1, 3)))]:
    try: fn(); print('OK', name)
    except Exception as e: print('DENIED', name, e)
`)
		if strings.Contains(r.Stdout, "OK ") || strings.Contains(r.Stdout, "uid 0") {
			t.Fatalf("privileged operation succeeded: %s %s", r.Stdout, r.Stderr)
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
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { p.Limits.MaxConcurrent = 1 })
	const n = 4
	out := make(chan string, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			_, r := f.py(fmt.Sprintf(`
import os, time
open('running-%d', 'w').close()
time.sleep(0.3)
print(len([x for x in os.listdir('.') if x.startswith('running-')]))
os.remove('running-%d')
`, i, i))
			out <- strings.TrimSpace(r.Stdout)
		}(i)
	}
	for i := 0; i < n; i++ {
		if got := <-out; got != "1" {
			t.Errorf("a call saw %s calls running at once (max_concurrent = 1)", got)
		}
	}
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
