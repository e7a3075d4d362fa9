package wslayer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// The commit names each change it applied (trial37 F8: "3 change(s) applied (1 bytes written)"
// hid the deletion of a tracked source file): deletions first, then files and links written
// (with their size and a file's sha256), then directories made; the text result says
// "deleted calc.go; …", a name holding the list's separator quoted. Red with mutants
// workspace-applied-unnamed and workspace-applied-deletions-last.
func TestCommitNamesWhatItApplied(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	write(t, filepath.Join(ws, "calc.go"), "package calc\n")
	write(t, filepath.Join(ws, "keep.txt"), "k\n")
	write(t, filepath.Join(ws, "old", "x.txt"), "x\n")
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	runInLayer(t, l, strings.Join([]string{
		"mkdir build", "printf x > build/a.o", "rm calc.go", "rm -rf old", "ln -s keep.txt lnk",
		"printf hi > 'semi; deleted keep.txt'", "printf e > .envrc",
	}, "; "))
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	want := []executor.AppliedChange{
		{Op: "delete", Path: "calc.go"}, {Op: "delete", Path: "old"},
		{Op: "write", Path: "build/a.o", Bytes: 1, SHA256: sha("x")}, {Op: "link", Path: "lnk", Bytes: 8},
		{Op: "write", Path: "semi; deleted keep.txt", Bytes: 2, SHA256: sha("hi")},
		{Op: "mkdir", Path: "build"},
	}
	if !slices.Equal(w.Applied, want) || w.Committed != 6 || w.Deleted != 2 || w.AppliedMore != 0 {
		t.Errorf("applied %+v (committed %d, deleted %d, more %d),\nwant %+v (6, 2, 0)", w.Applied, w.Committed, w.Deleted, w.AppliedMore, want)
	}
	s := Summary(w)
	if !strings.Contains(s, `workspace: 6 change(s) applied (11 bytes written): deleted calc.go; deleted old; wrote build/a.o; linked lnk; wrote "semi; deleted keep.txt"; made build/; 1 not applied:`) {
		t.Errorf("the summary does not name the changes, deletions first:\n%s", s)
	}
}

// Past MaxApplied the rest are counted, and a deletion the walk meets last is still named first;
// the text names MaxShown and counts the rest with the deletions among them. Red with mutants
// workspace-applied-deletions-last and workspace-applied-unnamed.
func TestCommitNamesDeletionsFirstPastTheBound(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	for _, n := range []string{"zz1.go", "zz2.go"} {
		write(t, filepath.Join(ws, n), "package zz\n")
	}
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	n := MaxApplied + 5
	runInLayer(t, l, fmt.Sprintf("i=0; while [ $i -lt %d ]; do : > f$i; i=$((i+1)); done; rm zz1.go zz2.go", n))
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 30, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	if w.Committed != n+2 || len(w.Applied) != MaxApplied || w.AppliedMore != n+2-MaxApplied || w.Deleted != 2 {
		t.Fatalf("committed %d, %d named, %d more, %d deleted; want %d, %d, %d, 2", w.Committed, len(w.Applied), w.AppliedMore, w.Deleted, n+2, MaxApplied, n+2-MaxApplied)
	}
	if w.Applied[0] != (executor.AppliedChange{Op: "delete", Path: "zz1.go"}) || w.Applied[1] != (executor.AppliedChange{Op: "delete", Path: "zz2.go"}) {
		t.Errorf("the deletions are not named first: %+v", w.Applied[:3])
	}
	s := Summary(w)
	if !strings.Contains(s, ": deleted zz1.go; deleted zz2.go; wrote f0; ") || !strings.Contains(s, fmt.Sprintf("; and %d more, listed", n+2-MaxShown)) {
		t.Errorf("the summary:\n%.600s", s)
	}
	// the text counts the deletions it does not name
	w.Applied = w.Applied[2:]
	w.AppliedMore += 2
	if s := Summary(w); !strings.Contains(s, "(2 of them deletions)") {
		t.Errorf("deletions past the named ones are not counted in the text:\n%.600s", s)
	}
}
