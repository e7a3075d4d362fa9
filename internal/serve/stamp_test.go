package serve

import (
	"context"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stampedCall makes one call as the named client of a serve started with origin, and returns
// the outcome line of it.
func stampedCall(t *testing.T, client, version, origin string) audit.Entry {
	t.Helper()
	al, path := tempAudit(t)
	p := testPolicy(10*time.Second, 2)
	p.File = "/home/u/.config/mcpsandbox/policy.toml"
	alsec.Of(p).Workspace = "/home/u/proj"
	st, ct := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = Run(ctx, p, &fakeExec{}, Options{Transport: st, Audit: al, Origin: origin}) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: client, Version: version}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := call(t, ctx, cs, map[string]any{"echo": "hi"}); err != nil || r.IsError {
		t.Fatalf("%v %v", err, r)
	}
	cs.Close()
	for _, e := range auditLines(t, path, 0) {
		if e.Decision == "ran" {
			return e
		}
	}
	t.Fatal("no outcome line")
	return audit.Entry{}
}

// Each audit line names the client that ran the call (its initialize's name and version, its
// text shown safely), the policy file and the workspace directory (trial38 F2: a line could
// not say which AI ran a call or in which repository), and init's check calls are marked
// "origin":"init-check" only when the serve was started with the mark and the client is
// init's own: a client's config that sets the variable marks none of its calls. Red with
// mutants audit-unstamped and audit-origin-any-client.
func TestAuditNamesClientAndSetUp(t *testing.T) {
	e := stampedCall(t, "claude-code", "2.1.332", "")
	if e.Client != "claude-code 2.1.332" || e.PolicyPath != "/home/u/.config/mcpsandbox/policy.toml" || e.WorkDir != "/home/u/proj" || e.Origin != "" {
		t.Errorf("a client's call: client %q policy_path %q workspace_dir %q origin %q", e.Client, e.PolicyPath, e.WorkDir, e.Origin)
	}
	if e := stampedCall(t, "evil\u202e\x1b[2Jname", "1", ""); e.Client != `evil\u202e␛[2Jname 1` {
		t.Errorf("a client name with invisibles logged as %q", e.Client)
	}
	if e := stampedCall(t, CheckClient, "1", audit.OriginInitCheck); e.Origin != audit.OriginInitCheck {
		t.Errorf("init's check call: origin %q, want %q", e.Origin, audit.OriginInitCheck)
	}
	if e := stampedCall(t, "claude-code", "2.1.332", audit.OriginInitCheck); e.Origin != "" || e.Client != "claude-code 2.1.332" {
		t.Errorf("a client's call in a serve its config marked as init's: origin %q client %q, want no origin", e.Origin, e.Client)
	}
}
