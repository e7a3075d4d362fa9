package serve

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recoveringExec is fakeExec that finished, at its start, commits a dead serve left.
type recoveringExec struct {
	*fakeExec
	mu   sync.Mutex
	recs []executor.Recovery
}

func (r *recoveringExec) Recovered() []executor.Recovery {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.recs
	r.recs = nil
	return out
}

// A commit a dead serve left, finished by this serve at its start, is on the audit's record
// once serve is ready: what it applied, which serve died and when its call began (its outcome
// line is missing: without this entry the log said nothing of the files that landed). One that
// could not be finished is recorded as an error. Red with mutant recovery-unaudited.
func TestRecoveredCommitsAudited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	began := time.Date(2026, 12, 5, 6, 0, 0, 0, time.UTC)
	ex := &recoveringExec{fakeExec: &fakeExec{}, recs: []executor.Recovery{
		{Call: "c-dead-4242", PID: 4242, Since: began, Changes: &executor.WorkspaceChanges{Committed: 7, Bytes: 70}},
		{PID: 4243, Since: began, Err: "the workspace is gone"},
	}}
	connect(t, testPolicy(time.Minute, 2), ex, al)
	var es []audit.Entry
	for end := time.Now().Add(10 * time.Second); len(es) < 2 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		es = outcomes(auditLines(t, path, 0))
	}
	if len(es) != 2 {
		t.Fatalf("the audit holds %+v, want the two recoveries", es)
	}
	if e := es[0]; e.Decision != audit.DecisionRecovered || e.Tool != audit.RecoveryTool || e.Workspace == nil || e.Workspace.Committed != 7 ||
		!strings.Contains(e.Reason, "serve 4242") || !strings.Contains(e.Reason, "2026-12-05T06:00:00Z") {
		t.Errorf("the finished commit is audited as %+v", e)
	}
	// the dead call's id: this line is its outcome, so audit verify counts it finished
	if e := es[0]; e.Call != "c-dead-4242" || !strings.Contains(e.Reason, "this line is its outcome") {
		t.Errorf("the recovered line names call %q (%s), want the dead call's", e.Call, e.Reason)
	}
	if e := es[1]; e.Call == "" || e.Call == "c-dead-4242" {
		t.Errorf("a recovery whose journal named no call got id %q", e.Call)
	}
	if e := es[1]; e.Decision != "error" || !strings.Contains(e.Reason, "the workspace is gone") || !strings.Contains(e.Reason, "serve 4243") {
		t.Errorf("the commit that could not be finished is audited as %+v", e)
	}
	if again := ex.Recovered(); len(again) != 0 {
		t.Errorf("serve left recoveries untaken: %+v", again)
	}
}

// The executor runs a call with the id of its "started" line on the context (executor.CallID):
// a commit's journal records it, so the line a later serve writes on finishing that commit is
// the call's outcome and audit verify counts no call left unfinished.
func TestCallRunsWithItsAuditID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	ex := &fakeExec{}
	cs, _ := connect(t, testPolicy(time.Minute, 2), ex, al)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": "x"}}); err != nil {
		t.Fatal(err)
	}
	var started string
	for _, e := range auditLines(t, path, 0) {
		if e.Decision == audit.DecisionStarted {
			started = e.Call
		}
	}
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if started == "" || len(ex.callIDs) != 1 || ex.callIDs[0] != started {
		t.Errorf("the call ran with id %q, its started line says %q", ex.callIDs, started)
	}
}
