//go:build unix

package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An executable at audit.path is a program, not a log: serve refuses it and appends nothing
// (attack round atk24c: a root serve given /usr/bin/python3.11 as its log appended its lines to
// the interpreter). The same file without its execute bits is a log.
func TestExecutableIsNoLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prog")
	const body = "\x7fELF not really\n"
	os.WriteFile(path, []byte(body), 0o755)
	os.Chmod(path, 0o755)
	if l, err := Open(path, nil); err == nil || !strings.Contains(err.Error(), "executable") {
		if l != nil {
			l.Close()
		}
		t.Fatalf("an executable as the audit log: %v (want refused)", err)
	}
	if b, _ := os.ReadFile(path); string(b) != body {
		t.Errorf("the executable was changed: %q", b)
	}
	os.Chmod(path, 0o600)
	l, err := Open(path, nil)
	if err != nil {
		t.Fatalf("the control, the same file 0600: %v", err)
	}
	l.Close()
}
