package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/serve/audit"
)

// audit verify: an empty log says so plainly and exits 0; an intact one gives its head; an
// edited one is TAMPERED with exit 1.
func TestAuditVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI("audit", "verify", empty)
	if err != nil || out != empty+": empty log: nothing to verify (serve appends one line per call)\n" {
		t.Fatalf("empty log: %v %q", err, out)
	}

	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"a", "b"} {
		if err := l.Append(audit.Entry{Server: "s", Tool: tool, Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	out, _, err = runCLI("audit", "verify", path)
	if err != nil || !strings.Contains(out, ": intact, 2 lines, head ") || strings.Contains(out, "empty") {
		t.Fatalf("intact log: %v %q", err, out)
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"tool":"a"`, `"tool":"x"`, 1)), 0o600)
	_, errOut, err := runCLI("audit", "verify", path)
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !strings.Contains(errOut, "TAMPERED: line 1") {
		t.Fatalf("edited log: %v %q", err, errOut)
	}
}
