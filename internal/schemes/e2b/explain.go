package e2b

import (
	"strconv"

	se "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/sandbox"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// delegated is the caveat on every threat only E2B's microVM answers: this host cannot check it.
const delegated = "isolation delegated to E2B (a Firecracker microVM per sandbox): nothing on this host can verify it, so the harness reports these scenarios N/A"

var threats = []verify.ThreatRule{
	{Threat: "read or change host files, processes or local sockets", Layers: []string{se.LayerMicroVM}, Caveat: delegated,
		Scenarios: []string{"read-ssh-key-absolute", "write-outside-python", "unix-socket-agent", "proc-parent-environ"}},
	{Threat: "gain privileges or exhaust resources inside the sandbox (fork and memory bombs)", Layers: []string{se.LayerMicroVM}, Caveat: delegated,
		Scenarios: []string{"setuid-root", "fork-bomb-python", "memory-bomb"}},
	{Threat: "reach the internet or cloud metadata", Layers: []string{se.LayerNoInternet},
		Caveat: "enforced by E2B when allow_internet_access = false is sent at create",
		Gap: func(p *policy.Policy) string {
			if e2bsec.Of(p).AllowInternet {
				return "e2b.allow_internet = true"
			}
			return ""
		}, Scenarios: []string{"outbound-internet", "cloud-metadata"}},
	{Threat: "read the server's E2B API key", Layers: []string{se.LayerKeyStaysHome},
		Scenarios: []string{"proc-self-environ", "proc-parent-environ"}},
	{Threat: "leave processes or sandboxes running after the call", Layers: []string{se.LayerLifecycle},
		Caveat: "a serve killed mid-call (SIGKILL, crash) leaves its sandboxes to its undertaker, a process of its own started with serve, which kills them as soon as serve's pipe to it closes; if the undertaker is killed too (a kill of the whole cgroup), E2B ends each sandbox within its leash (30 s: sandboxes are created with that lifetime and kept alive while needed), and the next serve on this host kills it at start",
		Gap: func(p *policy.Policy) string {
			if e2bsec.Of(p).Reuse == "session" {
				return "reuse = session: the session's sandbox and whatever it started live until the session ends, e2b.sandbox_timeout (" + e2bsec.Of(p).SandboxTimeout.String() + ") passes, or another session takes its place (at most e2b.max_sessions = " + strconv.Itoa(e2bsec.Of(p).SessionCap()) + " at once; the least recently used idle one gives way, as when E2B answers 429)"
			}
			return ""
		}, Scenarios: []string{"setsid-survivor", "sleep-past-timeout", "server-killed-mid-call"}},
	{Threat: "flood the client with output, or hang it", Server: true,
		By:        "serve's limits (timeout, max_output_bytes) and the E2B client's deadlines, capped streams and size-limited frames",
		Scenarios: []string{"output-flood-file", "output-flood-python", "sleep-past-timeout", "cpu-spin-past-timeout", "concurrent-long-calls", "fake-jsonrpc-on-fds"}},
	{Threat: "a broken or hostile E2B endpoint hangs serve or grows its memory", Server: true,
		By: "every E2B request has a deadline, and the call's timeout bounds creating its sandbox; answers, Connect frames and NDJSON lines are size-limited; run_code results are capped (64 results, limits.max_output_bytes) and an exception's name, value and traceback share limits.max_output_bytes, dropped as they arrive; no redirect is followed (it would carry the key); the key is redacted from every upstream string before any cap; bounded retries on 429/502/503"},
}
