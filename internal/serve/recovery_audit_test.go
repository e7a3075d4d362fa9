package serve

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
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
		{PID: 4242, Since: began, Changes: &executor.WorkspaceChanges{Committed: 7, Bytes: 70}},
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
	if e := es[1]; e.Decision != "error" || !strings.Contains(e.Reason, "the workspace is gone") || !strings.Contains(e.Reason, "serve 4243") {
		t.Errorf("the commit that could not be finished is audited as %+v", e)
	}
	if again := ex.Recovered(); len(again) != 0 {
		t.Errorf("serve left recoveries untaken: %+v", again)
	}
}
