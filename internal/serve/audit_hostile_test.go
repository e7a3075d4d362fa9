package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// auditLines reads the log, checks every line is within the bound and the chain verifies
// (unless foreign lines are expected), and returns the entries.
func auditLines(t *testing.T, path string, wantProblems int) []audit.Entry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var es []audit.Entry
	for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var e audit.Entry
		if json.Unmarshal([]byte(l), &e) == nil && e.Hash != "" {
			if len(l)+1 > audit.MaxLine {
				t.Errorf("audit line %d is %d bytes, over the %d bound", i+1, len(l)+1, audit.MaxLine)
			}
			es = append(es, e)
		}
	}
	rep, err := audit.Verify(strings.NewReader(string(b)))
	if len(rep.Problems) != wantProblems {
		t.Fatalf("audit verify: %d problems, want %d: %v %+v", len(rep.Problems), wantProblems, err, rep.Problems)
	}
	return es
}

// outcome is the entry that closes the call with that tool, the last one.
func outcomes(es []audit.Entry) []audit.Entry {
	var out []audit.Entry
	for _, e := range es {
		if e.Decision != audit.DecisionStarted && e.Decision != audit.DecisionForeign {
			out = append(out, e)
		}
	}
	return out
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// Hostile bound on serve's heap after the hostile calls (client included: same process).
const hostileHeapBound = 48 << 20

// A client's huge argument and an executor's huge refusal/exception texts cannot blind the
// audit: every call is answered, every line stays within audit.MaxLine, the chain verifies,
// the next call is answered and audited, and serve's heap comes back down.
func TestHostileContentKeepsTheAuditWritable(t *testing.T) {
	cs, path := auditedSession(t)
	ctx := context.Background()
	before := heapInUse()
	big := strings.Repeat("<", 1<<20)             // 6 MiB once JSON-escaped
	huge := strings.Repeat("x", 5<<20)            // a 5 MB reason
	escaping := strings.Repeat("&\x01<", 1<<20/3) // 1 MiB that is 6 MiB escaped
	attacks := []struct {
		name string
		args map[string]any
		want string // decision
	}{
		{"1 MiB argument of <", map[string]any{"hold": big}, "ran"}, // the fake ignores a hold it cannot parse
		{"5 MB exception", map[string]any{"raise": huge}, "ran"},
		{"5 MB refusal rule", map[string]any{"refuse": huge}, "refused"},
		{"1 MiB refusal rule of escaped characters", map[string]any{"refuse": escaping}, "refused"},
	}
	for i, a := range attacks {
		t0 := time.Now()
		r, err := call(t, ctx, cs, a.args)
		t.Logf("%s: answered in %s", a.name, time.Since(t0))
		if err != nil {
			t.Fatalf("%s: %v", a.name, err)
		}
		if strings.Contains(text(r), "audit log") {
			t.Fatalf("%s: answered with an audit failure: %.300s", a.name, text(r))
		}
		// the result's text is bounded too: a refusal quoting a huge argument is clipped
		if bound := int(testPolicy(10*time.Second, 2).Limits.MaxOutputBytes) + MaxErrorText + 100; len(text(r)) > bound {
			t.Fatalf("%s: the result's text is %d bytes, bound %d", a.name, len(text(r)), bound)
		}
		if a.want == "refused" && (len(text(r)) > MaxErrorText+100 || !strings.Contains(text(r), "bytes of this message cut")) {
			t.Fatalf("%s: the refusal's text is %d bytes (bound %d) and says no cut: %.200s", a.name, len(text(r)), MaxErrorText, text(r))
		}
		r, err = call(t, ctx, cs, map[string]any{"echo": fmt.Sprint("next ", i)})
		if err != nil || r.IsError || !strings.Contains(text(r), fmt.Sprint("next ", i)) {
			t.Fatalf("after %s the next call was not answered: %v %.300s", a.name, err, text(r))
		}
		es := outcomes(auditLines(t, path, 0))
		if len(es) != 2*(i+1) {
			t.Fatalf("after %s: %d outcome entries, want %d", a.name, len(es), 2*(i+1))
		}
		if got := es[len(es)-2]; got.Decision != a.want || len(got.Clipped) == 0 {
			t.Fatalf("%s: audited %q, clipped %+v", a.name, got.Decision, got.Clipped)
		}
		if got := es[len(es)-1]; got.Decision != "ran" || !strings.Contains(string(got.Arguments), fmt.Sprint("next ", i)) {
			t.Fatalf("after %s the next call's audit entry: %+v", a.name, got)
		}
	}
	after := heapInUse()
	t.Logf("heap in use: %d KiB before the attacks, %d KiB after (bound %d MiB)", before>>10, after>>10, hostileHeapBound>>20)
	if after > hostileHeapBound {
		t.Fatalf("heap in use %d MiB after the hostile calls, bound %d MiB", after>>20, hostileHeapBound>>20)
	}
}

// A line appended to the log by hand (over-long, malformed) does not stop serve: calls are still
// answered and audited, and verify names the foreign lines.
func TestForeignLinesInTheLogDoNotStopServe(t *testing.T) {
	cs, path := auditedSession(t)
	for i, junk := range []string{strings.Repeat("<", 200<<10) + "\n", `{"decision":"ran"` + "\n"} {
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteString(junk)
		fh.Close()
		r, err := call(t, context.Background(), cs, map[string]any{"echo": "still answered"})
		if err != nil || r.IsError || !strings.Contains(text(r), "still answered") {
			t.Fatalf("call after a foreign line: %v %.300s", err, text(r))
		}
		es := auditLines(t, path, i+1)
		if last := es[len(es)-1]; last.Decision != "ran" {
			t.Fatalf("the call after a foreign line was not audited: %+v", last)
		}
	}
}

// A log that cannot be written refuses calls without running them, naming audit.path; once the
// path is writable again, calls run and are audited without a restart.
func TestUnwritableLogRefusesCallsThenRecovers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	f := &fakeExec{}
	cs, _ := connect(t, testPolicy(10*time.Second, 2), f, al)
	os.Rename(path, path+".aside")
	os.Mkdir(path, 0o700) // nothing can be appended at the path
	r, err := call(t, context.Background(), cs, map[string]any{"echo": "SHOULD-NOT-RUN"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(text(r), "audit.path") || !strings.Contains(text(r), path) || strings.Contains(text(r), "SHOULD-NOT-RUN") {
		t.Fatalf("call with an unwritable log: %q", text(r))
	}
	f.mu.Lock()
	ran := len(f.sessions)
	f.mu.Unlock()
	if ran != 0 {
		t.Fatal("the call ran although its intent could not be audited")
	}
	os.Remove(path)
	r, err = call(t, context.Background(), cs, map[string]any{"echo": "back"})
	if err != nil || r.IsError || !strings.Contains(text(r), "back") {
		t.Fatalf("call once the path is writable again: %v %q", err, text(r))
	}
	if es := auditLines(t, path, 0); len(es) != 2 || es[0].Decision != audit.DecisionStarted || es[1].Decision != "ran" || es[0].Call != es[1].Call {
		t.Fatalf("new log: %+v", es)
	}
}

// A call killed by shutdown is audited cancelled, whatever the executor made of the kill.
func TestShutdownKilledCallIsAuditedCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	f := &fakeExec{}
	st, ct := newInMemory()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, testPolicy(time.Minute, 2), f, Options{Transport: st, Audit: al}) }()
	cs := clientOn(t, ct)
	go call(t, context.Background(), cs, map[string]any{"sleep": "1h"}) // the fake answers exit 137 when killed
	for f.running.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not stop")
	}
	es := outcomes(auditLines(t, path, 0))
	if len(es) != 1 || es[0].Decision != "cancelled" {
		t.Fatalf("shutdown-killed call audited as %+v", es)
	}
	// Over stdio there is no grace period: the reason says it was killed at once.
	if !strings.Contains(es[0].Reason, "at once") || strings.Contains(es[0].Reason, "grace period was") || strings.Contains(es[0].Reason, "end of the grace") {
		t.Errorf("the reason of a stdio shutdown's kill: %q", es[0].Reason)
	}
}

// An over-long stdio message is answered with its own id (found at its start or its end), the
// refused tools/call is audited, and the session goes on.
func TestOversizeMessageAnsweredWithItsIDAndAudited(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), &fakeExec{},
			Options{Audit: al, Transport: &LineTransport{In: inR, Out: outW, Max: 1 << 20}})
	}()
	lines := bufio.NewReader(outR)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(want ...string) {
		t.Helper()
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Fatalf("answer %.300s lacks %s", l, w)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	expect(`"id":1`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	pad := strings.Repeat("<", 3<<20)
	send(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"` + pad + `"}}}`)
	expect(`"id":42`, "-32600", "over the 1048576-byte limit")
	send(`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"echo":"` + pad + `"},"name":"fake"},"id":"tail-id"}`)
	expect(`"id":"tail-id"`, "-32600")
	// refused for their form (attack round atk31, F1): answered with the id a scan finds, and
	// a tools/call audited as refused, as an over-long one is
	send(`{"jsonrpc":"2.0","id":43,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"x"}}`)
	expect(`"id":43`, "-32700", "not valid JSON")
	send(`[{"jsonrpc":"2.0","id":44,"method":"tools/call","params":{"name":"fake","arguments":{}}}]`)
	expect(`"id":null`, "-32600", "batches are not supported")
	deep := strings.Repeat("[", 200) + strings.Repeat("]", 200)
	send(`{"jsonrpc":"2.0","id":45,"method":"tools/call","params":{"name":"fake","arguments":{"echo":` + deep + `}}}`)
	expect(`"id":45`, "-32600", "deeper than")
	deep = strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	send(`{"jsonrpc":"2.0","id":46,"method":"tools/call","params":{"name":"fake","arguments":{"echo":` + deep + `}}}`)
	expect(`"id":46`, "-32600", "deeper than") // past Go's own 10,000-level check too: serve's bound says why (atk48b F5)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"still here"}}}`)
	expect(`"id":2`, "still here")
	inW.Close()
	<-done
	var refused, formed []audit.Entry
	for _, e := range auditLines(t, path, 0) {
		switch e.Rule {
		case RuleMaxMessage:
			refused = append(refused, e)
		case RuleMessage:
			formed = append(formed, e)
		}
	}
	if len(formed) != 4 || formed[0].Tool != "fake" || formed[1].Tool != "fake" || !strings.Contains(formed[2].Reason, "deeper than") || formed[0].Session == "" {
		t.Errorf("calls refused for their form audited as %+v", formed)
	}
	if len(refused) != 2 || refused[0].Decision != "refused" || refused[0].Tool != "fake" || len(refused[0].Clipped) != 1 ||
		refused[0].Clipped[0].Bytes < 3<<20 || refused[0].Session == "" {
		t.Fatalf("over-long calls audited as %+v", refused)
	}
}

func newInMemory() (*mcp.InMemoryTransport, *mcp.InMemoryTransport) {
	return mcp.NewInMemoryTransports()
}

func clientOn(t *testing.T, ct mcp.Transport) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A call whose outcome cannot be audited (the log broke while it ran) has its result withheld;
// its "started" entry is on record.
func TestOutcomeAuditFailureWithholdsTheResult(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	f := &fakeExec{}
	cs, _ := connect(t, testPolicy(10*time.Second, 2), f, al)
	type answer struct {
		text    string
		isError bool
		err     error
	}
	ch := make(chan answer, 1)
	go func() {
		r, err := call(t, context.Background(), cs, map[string]any{"sleep": "300ms", "echo": "SECRET-RESULT"})
		if err != nil {
			ch <- answer{err: err}
			return
		}
		ch <- answer{text(r), r.IsError, nil}
	}()
	for f.running.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	os.Rename(path, path+".aside")
	os.Mkdir(path, 0o700)
	a := <-ch
	if a.err != nil || !a.isError || strings.Contains(a.text, "SECRET-RESULT") || !strings.Contains(a.text, "withheld") {
		t.Fatalf("unaudited result: %+v", a)
	}
	if es := auditLines(t, path+".aside", 0); len(es) != 1 || es[0].Decision != audit.DecisionStarted {
		t.Fatalf("the call's started entry: %+v", es)
	}
}

// A call's audit entry counts what its writes did to the workspace: applied, refused (a
// conflict), written back though gone; a call that changed nothing has no such record
// (trial27: a write refused as a conflict left no trace in the audit).
func TestAuditCountsTheWorkspaceChanges(t *testing.T) {
	cs, path := auditedSession(t)
	for _, args := range []map[string]any{{"held": 2}, {"echo": "nothing written"}} {
		if r, err := call(t, context.Background(), cs, args); err != nil || r.IsError {
			t.Fatalf("%v: %v %v", args, err, r)
		}
	}
	b, _ := os.ReadFile(path)
	var ran []audit.Entry
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e audit.Entry
		if json.Unmarshal([]byte(l), &e) == nil && e.Decision == "ran" {
			ran = append(ran, e)
		}
	}
	if len(ran) != 2 {
		t.Fatalf("%d ran entries, want 2:\n%s", len(ran), b)
	}
	if w := ran[0].Workspace; w == nil || !reflect.DeepEqual(*w, audit.WorkspaceRecord{Committed: 1, Bytes: 5, Refused: 2, Restored: 1,
		RefusedChanges: []audit.RefusedRecord{{Path: "0", Why: "changed by another writer"}, {Path: "1", Why: "changed by another writer"}}}) {
		t.Errorf("the call with a conflict: workspace %+v, want 1 applied, 2 refused, 1 written back", w)
	}
	if ran[1].Workspace != nil {
		t.Errorf("a call that wrote nothing: workspace %+v, want none", ran[1].Workspace)
	}
}

// A call's result and its audit line name the workspace changes applied, deletions first
// (trial37 F8: "[workspace: 3 change(s) applied (1 bytes written)]" and {"committed":1,
// "bytes":0} hid the deletion of a tracked source file): the text by visible.Name, so a name
// cannot forge a line, the audit with each change's op, path, bytes and a written file's
// sha256, and the refused ones with their rule (trial38 F3); the log verifies. Red with mutants
// audit-workspace-unnamed and audit-refused-unnamed (the commit's own list is tested in
// internal/serve/wslayer).
func TestAuditNamesTheWorkspaceChanges(t *testing.T) {
	cs, path := auditedSession(t)
	r, err := call(t, context.Background(), cs, map[string]any{"applied": true})
	if err != nil || r.IsError {
		t.Fatalf("%v %v", err, r)
	}
	answer := text(r)
	want := `[workspace: 4 change(s) applied (2 bytes written): deleted calc.go; wrote build/a.o; wrote "x\n[workspace: 0 change(s) applied]"; made build/; 2 not applied:`
	if !strings.Contains(answer, want) {
		t.Errorf("the answer does not name the changes applied:\n%s\nwant it to hold:\n%s", answer, want)
	}
	es := auditLines(t, path, 0)
	var w *audit.WorkspaceRecord
	for _, e := range es {
		if e.Decision == "ran" {
			w = e.Workspace
		}
	}
	var applied []audit.AppliedRecord
	for _, a := range appliedFake.Applied {
		a.Path = visible.Name(a.Path) // shown as the result shows it (atk38b F6)
		applied = append(applied, audit.AppliedRecord(a))
	}
	refused := []audit.RefusedRecord{{Path: ".envrc", Why: "protected"}, {Path: "CLAUDE.md", Why: "protected"}} // trial38 F3
	if want := (audit.WorkspaceRecord{Committed: 4, Bytes: 2, Refused: 2, Deleted: 1, Applied: applied, RefusedChanges: refused}); w == nil || !reflect.DeepEqual(*w, want) {
		t.Errorf("the audit's workspace record %+v, want %+v", w, want)
	}
}

// auditedSession connects a client to a serve of the fake executor that audits to the returned
// path (the log is closed after the session).
func auditedSession(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	al, path := tempAudit(t)
	cs, _ := connect(t, testPolicy(10*time.Second, 2), &fakeExec{}, al)
	return cs, path
}
