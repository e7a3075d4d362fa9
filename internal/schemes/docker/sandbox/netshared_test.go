package sandbox

import (
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestNamedNetworkJoinsSessions measures what explain's state row says of docker.network =
// "bridge": session A's container serves a secret on the network (a process its call left
// running, as sessions keep them), and session B's program connects to it and reads it. The
// engine's inter-container traffic on a shared network is a channel between sessions that
// network = "none" and host lists (no network of their own) do not have.
func TestNamedNetworkJoinsSessions(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"}) }))
	serve := "import socket, os\n" +
		"s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('0.0.0.0', 8000)); s.listen(4)\n" +
		"if os.fork() == 0:\n" +
		"    os.setsid()\n" +
		"    while True:\n" +
		"        c, _ = s.accept(); c.sendall(b'secret-of-A\\n'); c.close()\n" +
		"s.close()\n" +
		"print(socket.gethostbyname(socket.gethostname()))\n"
	a := mustIn(t, e, "A", ToolPython, map[string]any{"code": serve})
	ip := strings.TrimSpace(a.Stdout)
	if ip == "" {
		t.Fatalf("session A: %+v", a)
	}
	b := mustIn(t, e, "B", ToolPython, map[string]any{"code": "import socket\ns = socket.create_connection(('" + ip + "', 8000), timeout=5)\nprint(s.recv(100).decode().strip())\n"})
	t.Logf("session B connected to session A's container at %s: %q %q", ip, b.Stdout, b.Stderr)
	if strings.TrimSpace(b.Stdout) != "secret-of-A" {
		t.Skipf("session B did not reach session A's container: this engine may keep containers apart (icc=false); nothing to measure: %+v", b)
	}
}
