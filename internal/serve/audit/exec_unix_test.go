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

// The log's place is held to the policy file's rule (atk35 F5): a log in a directory others may
// write (a group's shared directory, another user's) can be deleted between calls and is begun
// again by the next line, a fresh chain that reads intact. Refused at Open, and at a reopen
// after the file was moved; controls: the same directory without group write, and a sticky
// world-writable directory above a private one (as /tmp), are accepted.
func TestAuditLogPlaceJudgedAsThePolicyFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the shared directory belongs to a group that is no one's private group") // the suite runs as root
	}
	top := t.TempDir()
	shared := filepath.Join(top, "shared")
	os.Mkdir(shared, 0o700)
	os.Chown(shared, 0, 4242) // a gid that is no user's private group
	os.Chmod(shared, 0o770)
	path := filepath.Join(shared, "audit.jsonl")
	if l, err := Open(path, nil); err == nil || !strings.Contains(err.Error(), "writable by group 4242") {
		if l != nil {
			l.Close()
		}
		t.Fatalf("a log in a directory group 4242 may write: %v (want refused, naming the group)", err)
	}
	os.Chmod(shared, 0o750)
	l, err := Open(path, nil)
	if err != nil {
		t.Fatalf("control: the same directory without group write: %v", err)
	}
	if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	// the place loosened while serve runs, the log moved aside: the reopen is judged too
	os.Chmod(shared, 0o770)
	os.Rename(path, path+".old")
	if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err == nil {
		t.Errorf("a reopen in a directory group 4242 may write was accepted")
	}
	l.Close()

	sticky := filepath.Join(top, "sticky")
	os.Mkdir(sticky, 0o700)
	os.Chmod(sticky, os.ModeSticky|0o777)
	own := filepath.Join(sticky, "own")
	os.Mkdir(own, 0o700)
	l, err = Open(filepath.Join(own, "audit.jsonl"), nil)
	if err != nil {
		t.Fatalf("control: a private directory under a sticky one (as /tmp): %v", err)
	}
	l.Close()
}
