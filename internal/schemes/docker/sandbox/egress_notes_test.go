package sandbox

import (
	"fmt"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// refusedProgram asks the proxy the environment names for a tunnel to each host:port, as pip
// does, and prints the status line's code of each (the test image has no urllib).
const refusedProgram = `import os, re, socket
proxy = re.match(r"http://([^:/]+):(\d+)", os.environ.get("HTTPS_PROXY", ""))
codes = []
for hp in %s:
    s = socket.create_connection((proxy.group(1), int(proxy.group(2))), timeout=10)
    s.sendall(("CONNECT %%s HTTP/1.1\r\nHost: %%s\r\n\r\n" %% (hp, hp)).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        c = s.recv(1)
        if not c:
            break
        head += c
    codes.append(head.split()[1].decode() if head else "closed")
    s.close()
print(" ".join(codes))
`

// A call's egress refusals are in its result, each with the host:port, the rule and the fix,
// named once however often the program retried, at most executor.MaxEgressDenied and the rest
// counted: pip and requests print only "Tunnel connection failed: 403 Forbidden", the rule and
// fix being in serve's log and audit only (trial40 F6). Per call (a fresh and a pooled
// container) and in a session, whose next call, refused nothing, names none. Red with mutant
// docker-egress-refusals-in-result.
func TestEgressRefusalsInResult(t *testing.T) {
	hosts := `["forbidden.test:443", "forbidden.test:443", "forbidden.test:443", "a.test:443", "b.test:8080", "c.test:443", "d.test:443"]`
	for _, mode := range []string{"call", "pooled", "session"} {
		t.Run(mode, func(t *testing.T) {
			p := egressPolicy(t, "pypi.test:443")
			switch mode {
			case "call":
				dksec.Of(p).Pool = 0
			case "pooled":
				dksec.Of(p).Pool = 1
			case "session":
				dksec.Of(p).Reuse = "session"
			}
			e := newEgressExec(t, p)
			run := func(code string) *executor.Result {
				t.Helper()
				if mode == "session" {
					return mustIn(t, e, "S", ToolPython, py(code))
				}
				return mustCall(t, e, ToolPython, py(code))
			}
			r := run(fmt.Sprintf(refusedProgram, hosts))
			if r.Stdout != "403 403 403 403 403 403 403\n" {
				t.Fatalf("the program's tunnels: %+v", r)
			}
			want := []string{
				`egress to forbidden.test:443 denied: not in docker.network (add "forbidden.test" to allow it)`,
				`egress to a.test:443 denied: not in docker.network (add "a.test" to allow it)`,
				`egress to b.test:8080 denied: not in docker.network (add "b.test:8080" to allow it)`,
			}
			if fmt.Sprintf("%q", r.EgressDenied) != fmt.Sprintf("%q", want) || r.EgressDeniedMore != 2 {
				t.Errorf("the result's refusals: %q and %d more, want %q and 2 more (c.test, d.test)", r.EgressDenied, r.EgressDeniedMore, want)
			}
			if r := run("print('none')"); r.Stdout != "none\n" || len(r.EgressDenied) != 0 || r.EgressDeniedMore != 0 {
				t.Errorf("the next call, which made no connection: %+v", r)
			}
		})
	}
}
