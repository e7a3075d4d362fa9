package sandbox

import (
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
)

// TestRefusalsPastTheTotalBoundAllAudited: every connection refused past the bound across
// containers is in the audit, one by one up to the log rate and counted in summaries past it.
// They were once audited at most one a second, the rest only mentioned in the next refusal's
// text (which the audit's counts never saw) and the last second's not at all: on a loaded
// machine TestEgressOneSandboxCannotStarve found 22 of a holder's denials missing. No engine
// is needed: the bound is full before the connections come.
func TestRefusalsPastTheTotalBoundAllAudited(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	lg, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lg.Close()
	s := &egressState{dir: dir, share: newEgressShare(1, 4), boxes: map[*boxEgress]bool{},
		draining: make(chan struct{}, 64), log: lg, server: "t", polHash: "h",
		warn: func(string, ...any) {}}
	s.popts = egress.Options{Key: "docker.network", MaxConns: 4, Scope: "container", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	holdPlaces(t, s.share, &boxEgress{name: "other"}, 1) // the bound across containers is reached
	b, err := s.open("box", "box-name")
	if err != nil {
		t.Fatal(err)
	}
	b.setSession("sess")
	const n = 3*egress.DefaultLogRate + 7
	for range n {
		c, err := net.Dial("unix", filepath.Join(b.dir, egressSock))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET http://x.test/ HTTP/1.1\r\nHost: x.test\r\n\r\n"))
		io.ReadAll(c) // the 503
		c.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.conns.Load() < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	b.close()
	entries := auditEntries(t, path)
	denied, summarised := 0, 0
	for _, e := range entries {
		switch {
		case e.Decision == egress.AuditSummary:
			var sum struct{ Denied int }
			json.Unmarshal(e.Arguments, &sum)
			summarised += sum.Denied
		case e.Decision == egress.AuditDenied && e.Rule == egress.RuleLimit && e.Session == "sess":
			denied++
		}
	}
	if denied+summarised != n {
		t.Fatalf("%d refusals past the bound across containers; the audit has %d one by one and %d in summaries", n, denied, summarised)
	}
	if denied > egress.DefaultLogRate*2 || summarised == 0 {
		t.Errorf("one by one %d, summarised %d: the log rate (%d a second) does not apply", denied, summarised, egress.DefaultLogRate)
	}
}
