package generate

import (
	"strings"
	"testing"
)

// The portable report names a key that starts something wherever it lies, in a list too
// ({"servers": [{"command": …}]}, hooks as lists): lists were never entered (review41 #13;
// mutant portable-report-arrays-unread).
func TestPortableReportReadsLists(t *testing.T) {
	src := []byte(`{"mcpServers": {"sandbox": {"command": "mcpsandbox", "args": ["serve", "--project"]}},
  "extras": {"servers": [{"name": "a", "command": "node evil.js"}], "hooks": [[{"run": "x"}]]}}`)
	got := strings.Join(unchecked(Target{Client: client(t, "cursor")}, src, "sandbox"), "\n")
	for _, want := range []string{`extras.servers[0].command ("node evil.js")`, `extras.hooks ([[{"run":"x"}]])`} {
		if !strings.Contains(got, want) {
			t.Errorf("the report does not name %s:\n%s", want, got)
		}
	}
}
