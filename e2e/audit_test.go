package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
)

func TestAuditLog(t *testing.T) {
	f := newFixture(t, nil)
	f.call("wc", "notes.txt")
	f.call("wc", f.secret) // the client sends the server's own secret as an argument
	f.call("cat", "/etc/passwd")
	f.cs.Close() // flush: every call has answered

	data, err := os.ReadFile(f.auditPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 6 { // each call: a "started" line before it runs, its outcome after
		t.Fatalf("want 6 audit lines, got %d:\n%s", len(lines), data)
	}
	if bytes.Contains(data, []byte(f.secret)) || !bytes.Contains(data, []byte("[redacted:"+harness.SecretEnv+"]")) {
		t.Fatalf("secret not redacted:\n%s", data)
	}
	for _, want := range []string{`"decision":"ran"`, `"decision":"refused"`, `"rule":"allowlist.workspace"`, `"policy_hash":"` + f.pol.Hash() + `"`, `"exit_code":0`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("audit log lacks %s:\n%s", want, data)
		}
	}
	out, err := exec.Command(binPath, "audit", "verify", f.auditPath).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "intact, 6 lines") {
		t.Fatalf("verify on an intact log: %v %s", err, out)
	}
	os.WriteFile(f.auditPath, bytes.Replace(data, []byte(`"decision":"refused"`), []byte(`"decision":"ran"    `), 1), 0o600)
	out, err = exec.Command(binPath, "audit", "verify", f.auditPath).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "TAMPERED") {
		t.Fatalf("verify missed an edited line: %v %s", err, out)
	}
}
