package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// trial36 F7: a pinned sha256 that is not the file's (a copy-paste of another command's) started
// quietly and failed every call. serve's start (after the first answers) warns for it, naming
// the fix; a command whose pin matches is not named. Red without the warning (mutant
// pin-mismatch-quiet-start).
func TestWrongPinWarnedAtStart(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := wcPolicy(t)
	cmds := alsec.Of(p).Commands
	if len(cmds) < 2 {
		t.Fatalf("the default policy pins %d commands", len(cmds))
	}
	bad := cmds[0].Name
	cmds[0].SHA256 = strings.Repeat("ab", 32)
	log := &testenv.LockedBuffer{}
	e, err := New(p, Options{HelperPath: exe, Logger: slog.New(slog.NewTextHandler(log, nil)), DeferProbe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if strings.Contains(log.String(), "will be refused") {
		t.Fatalf("warned before Begin (hashing is off serve's start path):\n%s", log)
	}
	e.Begin()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "will be refused") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	got := log.String()
	if !strings.Contains(got, "level=WARN") || !strings.Contains(got, "every call of "+bad+" will be refused") ||
		!strings.Contains(got, "does not match") || !strings.Contains(got, "sha256sum "+cmds[0].Path) {
		t.Fatalf("no warning naming %s and the fix:\n%s", bad, got)
	}
	for _, c := range cmds[1:] {
		if strings.Contains(got, "every call of "+c.Name+" ") {
			t.Errorf("%s, pinned right, was warned about:\n%s", c.Name, got)
		}
	}
}

// A file that never matched its pin since serve started is refused as "does not match"; one
// that matched and changed since as "changed since it was pinned" (trial36 F7: the first
// wording assumed an upgrade for a pin that was never this file's). Red with the old wording
// (mutant pin-mismatch-says-changed).
func TestPinRefusalSaysWhetherItEverMatched(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	os.WriteFile(bin, []byte("#!/bin/sh\necho one\n"), 0o755)
	sum := sha256.Sum256([]byte("#!/bin/sh\necho one\n"))
	right := hex.EncodeToString(sum[:])
	never := &pinned{Command: policy.Command{Name: "tool", Path: bin, SHA256: strings.Repeat("cd", 32)}, exec: []string{bin}}
	if _, err := never.open(); err == nil || !strings.Contains(err.Error(), bin+" does not match its pinned sha256") || strings.Contains(err.Error(), "changed since") {
		t.Errorf("a pin that never matched: %v", err)
	}
	once := &pinned{Command: policy.Command{Name: "tool", Path: bin, SHA256: right}, exec: []string{bin}}
	f, err := once.open()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	time.Sleep(10 * time.Millisecond) // a new mtime
	os.WriteFile(bin, []byte("#!/bin/sh\necho two\n"), 0o755)
	if _, err := once.open(); err == nil || !strings.Contains(err.Error(), bin+" changed since it was pinned") {
		t.Errorf("a file changed after it matched: %v", err)
	}
}
