package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A refused file's content is kept for review, not lost with the layer (trial38 F3): the
// CLAUDE.md a call drafted (protected), a protected directory's files, a file of a call
// conflicting with another writer's edit, each under the call's own directory of the store,
// mode 0600, and the result names the directory; a link or a FIFO is never kept. Red when
// nothing is kept (mutant workspace-refused-not-kept).
func TestRefusedContentIsKeptForReview(t *testing.T) {
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "refused")
	write(t, filepath.Join(ws, "f.txt"), "base\n")
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	l.Call = "call-7/../x"
	l.Start()
	runInLayer(t, l, strings.Join([]string{
		"echo 'the model draft' > CLAUDE.md", "mkdir -p .github/workflows", "echo 'on: push' > .github/workflows/ci.yml",
		"ln -s /etc/shadow .github/workflows/link", "mkfifo .github/workflows/fifo", "echo call > f.txt", "echo ok > plain.txt",
	}, "; "))
	write(t, filepath.Join(ws, "f.txt"), "the user's edit\n") // another writer, while the call ran
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws, Keep: store})
	if err != nil {
		t.Fatal(err)
	}
	sum := Summary(w)
	t.Logf("%s", sum)
	if w.Kept == "" || filepath.Dir(w.Kept) != store || !strings.Contains(filepath.Base(w.Kept), "call-7x") {
		t.Fatalf("kept in %q, want a directory of the call's own under %s", w.Kept, store)
	}
	if !strings.Contains(sum, "kept for review in "+w.Kept) {
		t.Errorf("the result does not name where the refused content is kept:\n%s", sum)
	}
	for p, want := range map[string]string{"CLAUDE.md": "the model draft\n", ".github/workflows/ci.yml": "on: push\n", "f.txt": "call\n"} {
		b, err := os.ReadFile(filepath.Join(w.Kept, p))
		if err != nil || string(b) != want {
			t.Errorf("kept %s: %q %v, want %q", p, b, err, want)
			continue
		}
		if st, _ := os.Stat(filepath.Join(w.Kept, p)); st.Mode().Perm() != 0o600 {
			t.Errorf("kept %s with mode %v, want 0600", p, st.Mode())
		}
	}
	for _, p := range []string{".github/workflows/link", ".github/workflows/fifo", "plain.txt"} {
		if _, err := os.Lstat(filepath.Join(w.Kept, p)); !os.IsNotExist(err) {
			t.Errorf("%s kept (%v): only refused regular files are", p, err)
		}
	}
	if w.KeptFiles != 3 {
		t.Errorf("%d files kept, want 3", w.KeptFiles)
	}
}

// What a call keeps is bounded (KeepCallFiles, KeepCallBytes: the rest counted, said), and the
// store holds the last KeepCalls calls' directories (mutant workspace-keep-unbounded).
func TestRefusedContentKeptIsBounded(t *testing.T) {
	ws, store := t.TempDir(), filepath.Join(t.TempDir(), "refused")
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	runInLayer(t, l, fmt.Sprintf("mkdir .husky; i=0; while [ $i -lt %d ]; do echo $i > .husky/h$i; i=$((i+1)); done; head -c %d /dev/zero > .envrc",
		KeepCallFiles+20, KeepCallBytes))
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 64 << 20, UID: -1, GID: -1, SandboxPath: ws, Keep: store})
	if err != nil {
		t.Fatal(err)
	}
	if w.KeptFiles > KeepCallFiles || w.NotKept < 21 {
		t.Errorf("kept %d, not kept %d: want at most %d kept and the rest counted", w.KeptFiles, w.NotKept, KeepCallFiles)
	}
	if !strings.Contains(Summary(w), "more not kept") {
		t.Errorf("the result does not say what was not kept:\n%s", Summary(w))
	}
	for i := 0; i < KeepCalls+5; i++ {
		l, err := New(t.TempDir(), ws)
		if err != nil {
			t.Fatal(err)
		}
		runInLayer(t, l, "echo x > CLAUDE.md")
		if _, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws, Keep: store}); err != nil {
			t.Fatal(err)
		}
	}
	if ents, _ := os.ReadDir(store); len(ents) > KeepCalls {
		t.Errorf("%d calls' directories in the store, want at most %d", len(ents), KeepCalls)
	}
}
