package generate

import (
	"bytes"
	"strings"
	"testing"
)

// A second init whose answers make the policy already there says it kept it, beside the client
// file it wrote (trial27: only "wrote ~/.claude.json", the policy left to guess); a policy
// written or replaced gets its own "wrote" line instead.
func TestReportSaysThePolicyWasKept(t *testing.T) {
	same := []byte("version = 1\n")
	for _, c := range []struct {
		pc   FileChange
		want bool
	}{
		{FileChange{Path: "/p.toml", Old: same, New: same, Existed: true}, true},
		{FileChange{Path: "/p.toml", Old: same, New: []byte("version = 1\nname = \"x\"\n"), Existed: true}, false},
		{FileChange{Path: "/p.toml", New: same}, false},
	} {
		pl := &Plan{PolicyPath: "/p.toml", PolicyFile: c.pc}
		var b bytes.Buffer
		pl.Report(&b, &Written{Files: []WriteResult{{Path: "/h/.claude.json", Target: "/h/.claude.json"}}})
		if got := strings.Contains(b.String(), "kept /p.toml"); got != c.want {
			t.Errorf("policy existed %v, unchanged %v: said kept %v, want %v:\n%s", c.pc.Existed, c.pc.Unchanged(), got, c.want, b.String())
		}
	}
}
