// Package e2b is the e2b scheme's entry in the registry: a proxy to E2B cloud sandboxes with
// mcpsandbox's limits, audit and lifecycle (the executor is internal/schemes/e2b/sandbox), with its threats, audit
// rules, harness adapter and negative controls.
package e2b

import (
	"os"
	"strconv"
	"strings"
	"time"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	se "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Rules are the e2b scheme's audit rules (MS301, a key written in the file, is common to all).
var Rules = []verify.Rule{
	{ID: "MS302", Severity: verify.Medium, Title: "E2B sandboxes may reach the internet"},
	{ID: "MS303", Severity: verify.Low, Title: "E2B sandboxes are reused for a whole session: calls see each other's files"},
	{ID: "MS304", Severity: verify.High, Title: "E2B_API_URL or E2B_SANDBOX_URL is plain http to a host that is not loopback: the key would cross the network in clear text (serve refuses to start)"},
	{ID: "MS305", Severity: verify.Medium, Title: "the policy chooses what serve sends as its E2B key, or where: api_key_env names a variable not named for E2B, or api_url is not E2B's API"},
}

// Scheme is the registry entry.
var Scheme = &scheme.Scheme{
	Name:    e2bsec.Name,
	Summary: "a proxy to E2B cloud sandboxes (microVMs), with mcpsandbox's limits and audit",
	Executor: func(p *policy.Policy, o scheme.ExecOptions) (executor.Executor, error) {
		return se.New(p, se.Options{Logger: o.Logger})
	},
	Layers:        se.LayerIDs,
	Threats:       threats,
	Audit:         verify.Auditor{Rules: Rules, Check: audit},
	Adapter:       adapter{},
	Controls:      controls,
	ControlPolicy: controlPolicy,
	Default:       scheme.WithoutCleanup(Default),
	Needs:         needs,
	Measured:      measured,
	Bounds:        bounds,
	Proof:         proof,
	ServerEnv:     serverEnv,
	Wizard:        wizard,
	Bench:         benchRows,
}

// bounds: what E2B's API, envd and the interpreter can send back.
func bounds(p *policy.Policy) []verify.Bound {
	l := p.Limits
	b := []verify.Bound{
		{Boundary: "e2b", What: "run_code results", Value: strconv.Itoa(se.MaxResults) + ", their bytes within " + l.MaxOutputBytes.String(), Key: "limits.max_output_bytes", Past: "dropped as they arrive; the result says truncated"},
		{Boundary: "e2b", What: "an exception's name, value and traceback", Value: l.MaxOutputBytes.String() + " together", Key: "limits.max_output_bytes", Past: "cut after the key is redacted; truncated"},
		{Boundary: "e2b", What: "creating a sandbox", Value: "the call's timeout, at most 60s", Key: "limits.timeout", Past: "the call fails naming the slow step"},
		{Boundary: "e2b", What: "a sandbox's life at E2B if serve and its undertaker die", Value: "30s", Past: "E2B ends it"},
		{Boundary: "e2b", What: "a read_file download, whatever envd's Content-Length says", Value: "limits.max_file_bytes + 1 bytes read", Key: "limits.max_file_bytes", Past: "the rest is never read; the result says truncated"},
		{Boundary: "e2b", What: "a list_files answer from envd", Value: "16MiB, decoded as it arrives", Past: "the call fails: refused as malformed"},
		{Boundary: "e2b", What: "an answer's head (status line and headers) from E2B's API or envd", Value: "64KiB", Past: "the request fails, the rest never read"},
	}
	if e2bsec.Of(p).Reuse == "session" {
		b = append(b, verify.Bound{Boundary: "e2b", What: "session sandboxes alive at once", Value: strconv.Itoa(e2bsec.Of(p).SessionCap()), Key: "e2b.max_sessions",
			Past: "the least recently used idle session's sandbox is killed first (as when E2B answers a create 429), its session's next call told; refused naming the key only when every one runs a call"})
	}
	for _, x := range verify.FileBounds(l) {
		// No file tools with reuse = "call" (internal/schemes/e2b/sandbox/filesystem.go); pictures are bounded alike.
		if e2bsec.Of(p).Reuse == "session" || strings.HasPrefix(x.What, "pictures") {
			b = append(b, x)
		}
	}
	return b
}

func audit(p *policy.Policy, add verify.Add) {
	if e2bsec.Of(p).AllowInternet {
		add("MS302", "e2b.allow_internet", "sandboxes can reach the internet: anything they read can leave", "set allow_internet = false")
	}
	// The policy's api_url is judged at load (e2b.api_url); the variables serve would take from
	// this environment are judged here, as serve's start judges them.
	for _, n := range []string{"E2B_API_URL", "E2B_SANDBOX_URL"} {
		if n == "E2B_API_URL" && e2bsec.Of(p).APIURL != "" {
			continue
		}
		if v := os.Getenv(n); v != "" {
			if why := e2bsec.URLProblem(v); why != "" {
				add("MS304", "e2b.api_url", "$%s = %q %s; serve refuses to start with it", "use https:// (plain http only to a loopback host: 127.0.0.1, ::1, localhost), or unset "+n, n, v, why)
			}
		}
	}
	if why := e2bsec.Of(p).KeyElsewhere(); why != "" {
		add("MS305", "e2b.api_key_env", "%s: serve sends that variable's value, as its key, to that API", `remove api_key_env and api_url (E2B_API_KEY to https://api.e2b.app), unless you run your own E2B and named them yourself`, why)
	}
	if e2bsec.Of(p).Reuse == "session" {
		add("MS303", "e2b.reuse", "one sandbox serves a whole session: a call sees what earlier calls left", `set reuse = "call" for a fresh sandbox each call`)
	}
}

// Default is the built-in policy: the code-interpreter template, a fresh sandbox per call, no
// internet. The key comes from $E2B_API_KEY (offline, the harness supplies its local server's).
func Default(string) (*policy.Policy, error) {
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).Reuse = "call"
	return p, nil
}

// controlPolicy is the base the negative controls weaken: the built-in policy with a 3 s timeout.
func controlPolicy() (*policy.Policy, error) {
	p, _ := Default("")
	p.Name = "harness-controls"
	p.Limits.Timeout = policy.Duration{Duration: 3 * time.Second}
	return p, nil
}
