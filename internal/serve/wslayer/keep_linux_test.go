package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

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
	if w.Kept == "" || filepath.Dir(w.Kept) != filepath.Join(store, WorkspaceKeepName(ws)) || !strings.Contains(filepath.Base(w.Kept), "call-7x") {
		t.Fatalf("kept in %q, want a directory of the call's own under %s", w.Kept, filepath.Join(store, WorkspaceKeepName(ws)))
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
	if ents, _ := os.ReadDir(filepath.Join(store, WorkspaceKeepName(ws))); len(ents) > KeepCalls || len(ents) < KeepCalls-1 {
		t.Errorf("%d calls' directories in the workspace's store, want at most %d", len(ents), KeepCalls)
	}
}

// keepCall runs one call in ws that writes a protected CLAUDE.md (refused, its content kept) and
// says where it was kept.
func keepCall(t *testing.T, ws, store string) string {
	t.Helper()
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	runInLayer(t, l, "echo draft > CLAUDE.md")
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws, Keep: store})
	if err != nil {
		t.Fatal(err)
	}
	if w.Kept == "" {
		t.Fatalf("nothing kept: %s", Summary(w))
	}
	return w.Kept
}

// A result whose refused files were not kept says which cause kept them out: the call's bound
// (one file past KeepCallBytes), or the store, named by its real path and error; it said "past
// the bound … or the store under $XDG_STATE_HOME/… unavailable", never which (trial49 F7). Red
// with mutant workspace-keep-why-unsaid.
func TestRefusedContentNotKeptSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func(t *testing.T) string
		run   string
		want  []string
	}{
		{"bound", func(t *testing.T) string { return filepath.Join(t.TempDir(), "refused") },
			fmt.Sprintf("head -c %d /dev/zero > .envrc", KeepCallBytes+1),
			[]string{fmt.Sprintf("not kept (1 file(s): 1 past the bound of %d files, %d bytes a call)", KeepCallFiles, KeepCallBytes)}},
		{"store", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "refused")
			write(t, f, "a file where the store's directory goes\n")
			return f
		}, "echo x > .envrc", []string{"not kept (1 file(s): the store under ", "/refused could not be made (", "not a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, store := t.TempDir(), tc.store(t)
			l, err := New(t.TempDir(), ws)
			if err != nil {
				t.Fatal(err)
			}
			runInLayer(t, l, tc.run)
			w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 64 << 20, UID: -1, GID: -1, SandboxPath: ws, Keep: store})
			if err != nil {
				t.Fatal(err)
			}
			sum := Summary(w)
			for _, want := range tc.want {
				if !strings.Contains(sum, want) {
					t.Errorf("the result does not say %q:\n%s", want, sum)
				}
			}
			if strings.Contains(sum, "$XDG") || strings.Contains(sum, " or the store") {
				t.Errorf("the result names no one cause:\n%s", sum)
			}
		})
	}
}

// Each workspace keeps its refused content in a store of its own, bounded to its own last
// KeepCalls calls: another workspace's refused calls (another session of the same user) do
// not remove the draft this workspace's result named (atk40b F6). Red with one store for all
// (mutant workspace-keep-store-per-workspace).
func TestRefusedContentKeptPerWorkspace(t *testing.T) {
	store := filepath.Join(t.TempDir(), "refused")
	a, b := filepath.Join(t.TempDir(), "proj"), filepath.Join(t.TempDir(), "proj") // one base name, two workspaces
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	kept := keepCall(t, b, store)
	if WorkspaceKeepName(a) == WorkspaceKeepName(b) || !strings.HasPrefix(WorkspaceKeepName(b), "proj-") {
		t.Errorf("stores %q and %q: want the base name and a hash of the real path", WorkspaceKeepName(a), WorkspaceKeepName(b))
	}
	if filepath.Dir(kept) != filepath.Join(store, WorkspaceKeepName(b)) {
		t.Errorf("kept in %s, want under the workspace's store %s", kept, filepath.Join(store, WorkspaceKeepName(b)))
	}
	for i := 0; i < KeepCalls+3; i++ {
		keepCall(t, a, store)
	}
	if _, err := os.Stat(filepath.Join(kept, "CLAUDE.md")); err != nil {
		t.Errorf("the other workspace's %d refused calls removed this one's kept draft: %v", KeepCalls+3, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(store, WorkspaceKeepName(a))); len(ents) != KeepCalls {
		t.Errorf("%d calls' directories in the busy workspace's store, want %d", len(ents), KeepCalls)
	}
}

// The store as a whole is bounded across workspaces: over keepStoreCalls (or keepStoreBytes),
// the workspace holding the most loses its oldest calls first, and no workspace loses its
// newest call (atk40b F6). Red without the bound (mutant workspace-keep-store-global-bound).
func TestRefusedContentStoreBoundAcrossWorkspaces(t *testing.T) {
	store := filepath.Join(t.TempDir(), "refused")
	old := keepStoreCalls
	keepStoreCalls = 6
	t.Cleanup(func() { keepStoreCalls = old })
	var ws [3]string
	for i := range ws {
		ws[i] = t.TempDir()
	}
	count := func(w string) int {
		ents, _ := os.ReadDir(filepath.Join(store, WorkspaceKeepName(w)))
		return len(ents)
	}
	// legacy: a call directory an earlier version left at the top, pruned first of all
	os.MkdirAll(filepath.Join(store, "20250101T000000.000000000Z-old", "x"), 0o700)
	var first [3]string
	for i := 0; i < 5; i++ {
		k := keepCall(t, ws[0], store)
		if i == 0 {
			first[0] = k
		}
	}
	first[1] = keepCall(t, ws[1], store)
	last1 := keepCall(t, ws[1], store)
	first[2] = keepCall(t, ws[2], store)
	n := count(ws[0]) + count(ws[1]) + count(ws[2])
	if n > keepStoreCalls {
		t.Errorf("%d calls kept across workspaces, want at most %d", n, keepStoreCalls)
	}
	if _, err := os.Stat(filepath.Join(store, "20250101T000000.000000000Z-old")); !os.IsNotExist(err) {
		t.Errorf("the earlier version's call directory is still there (%v)", err)
	}
	if _, err := os.Stat(first[0]); !os.IsNotExist(err) {
		t.Errorf("the busiest workspace's oldest call %s is still there (%v)", first[0], err)
	}
	for _, k := range []string{first[1], last1, first[2]} {
		if _, err := os.Stat(k); err != nil {
			t.Errorf("%s removed: the workspace holding the most is pruned first", k)
		}
	}
	// the byte bound (room kept for one more call): the workspace holding the most bytes goes first
	oldBytes := keepStoreBytes
	keepStoreBytes = KeepCallBytes + 4*int64(len("draft\n"))
	t.Cleanup(func() { keepStoreBytes = oldBytes })
	keepStoreCalls = 100
	keepCall(t, ws[2], store)
	if got := count(ws[0]) + count(ws[1]) + count(ws[2]); got > 5 || count(ws[2]) != 2 || count(ws[0]) < 1 || count(ws[1]) < 1 {
		t.Errorf("over the byte bound: %d, %d, %d calls kept, want the busiest pruned and the newest of each kept", count(ws[0]), count(ws[1]), count(ws[2]))
	}
	keepStoreBytes = oldBytes
	// every workspace holds one call: the bound gives way before a newest call does
	keepStoreCalls = 2
	for _, w := range ws {
		keepCall(t, w, store)
	}
	for _, w := range ws {
		if count(w) < 1 {
			t.Errorf("a workspace's newest call was removed by the store's bound")
		}
	}
}

// A refused entry the keeper cannot read (gone before it looked, a directory it cannot open or
// list) is counted as not kept, so the result's "more not kept" does not undercount (review41
// #10). Red when such an entry is dropped uncounted (mutant workspace-keep-errors-uncounted).
func TestKeeperCountsEntriesItCannotRead(t *testing.T) {
	up := t.TempDir()
	write(t, filepath.Join(up, "there.txt"), "x\n")
	fd, err := openDir(unix.AT_FDCWD, up)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	k := &keeper{store: filepath.Join(t.TempDir(), "refused"), call: "c", ws: t.TempDir()}
	k.entry(fd, "gone.txt", "gone.txt", 0)
	k.entry(fd, "there.txt", "there.txt", 0)
	if k.root != nil {
		defer k.root.Close()
	}
	if k.skipped != 1 || k.files != 1 {
		t.Errorf("not kept %d, kept %d: want the entry that could not be read counted (1) and the other kept (1)", k.skipped, k.files)
	}
}
