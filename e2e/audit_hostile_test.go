package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// The real binary: an argument that grows six-fold when escaped, then lines appended to the log
// by hand, do not stop serve answering and auditing calls; verify names each foreign line.
func TestAuditHostileContentAndForeignLines(t *testing.T) {
	f := newFixture(t, nil)
	f.call("wc", strings.Repeat("<", 100<<10)) // 600 KiB escaped: the old cap let a 96 KiB line through
	answered := func(when string) {
		t.Helper()
		res, r := f.call("wc", "notes.txt")
		if res.IsError || r.ExitCode != 0 || r.Stdout == "" {
			t.Fatalf("%s: the next call was not answered: %+v %+v", when, res, r)
		}
	}
	answered("after a huge argument")
	data, _ := os.ReadFile(f.auditPath)
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if len(l)+1 > audit.MaxLine {
			t.Errorf("audit line %d: %d bytes, over %d", i+1, len(l)+1, audit.MaxLine)
		}
	}
	if out, err := exec.Command(binPath, "audit", "verify", f.auditPath).CombinedOutput(); err != nil || !strings.Contains(string(out), "intact, 4 lines") {
		t.Fatalf("verify: %v %s", err, out)
	}
	fh, err := os.OpenFile(f.auditPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(strings.Repeat("x", 300<<10) + "\n")   // line 5
	fh.WriteString(`{"decision":"ran","hash":"0"` + "\n") // line 6
	fh.Close()
	answered("after foreign lines") // lines 7 (marker), 8, 9
	answered("after the marker")    // lines 10, 11
	out, err := exec.Command(binPath, "audit", "verify", f.auditPath).CombinedOutput()
	if err == nil {
		t.Fatalf("verify passed a log with foreign lines:\n%s", out)
	}
	for _, want := range []string{"TAMPERED: line 5:", "TAMPERED: line 6:", "2 of 11 lines"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("verify output lacks %q:\n%s", want, out)
		}
	}
	for n := 7; n <= 11; n++ {
		if strings.Contains(string(out), fmt.Sprintf("line %d:", n)) {
			t.Errorf("verify flagged serve's own line %d:\n%s", n, out)
		}
	}
}
