//go:build unix

package verify

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify says what serve refuses (atk35 F5): an audit log in a directory a group that is no
// one's private one may write is MS405 (high); the same log with the directory closed is not.
// A log not made yet in a world-writable directory that is not sticky is MS405 too; in a sticky
// one (as /tmp) it is not.
func TestAuditLogPlaceIsMS405(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the directory belongs to a group that is no one's private group")
	}
	rules := func(path string) []string {
		p := policy.Default("allowlist")
		p.Audit.Path = path
		var rs []string
		for _, f := range Audit(p, "", Auditor{}) {
			rs = append(rs, f.Rule)
		}
		return rs
	}
	shared := filepath.Join(t.TempDir(), "shared")
	os.Mkdir(shared, 0o700)
	os.Chown(shared, 0, 4242)
	os.Chmod(shared, 0o770)
	log := filepath.Join(shared, "audit.jsonl")
	os.WriteFile(log, nil, 0o600)
	if rs := rules(log); !slices.Contains(rs, "MS405") {
		t.Errorf("a log in a directory group 4242 may write: verify said %v, want MS405", rs)
	}
	os.Chmod(shared, 0o750)
	if rs := rules(log); slices.Contains(rs, "MS405") {
		t.Errorf("control: the directory closed: verify said MS405")
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	if rs := rules(filepath.Join(open, "audit.jsonl")); !slices.Contains(rs, "MS405") {
		t.Errorf("a log to be made in a world-writable directory: verify said %v, want MS405", rs)
	}
	os.Chmod(open, os.ModeSticky|0o777)
	if rs := rules(filepath.Join(open, "audit.jsonl")); slices.Contains(rs, "MS405") {
		t.Errorf("control: the same directory sticky (as /tmp): verify said MS405")
	}
}
