package wslayer

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// What another writer changed in the workspace after a call started (another session's
// write_file here) is kept: the call's commit neither deletes it (a whiteout, an opaque
// directory) nor overwrites it, and lists each as a conflict (attack round atk24c, F6: session
// B's d/important.txt was deleted by session A's `rm -rf d; mkdir d`, and no one was told).
// What changed before the call started, even after its layer was made, is the program's to
// overwrite; and another writer leaving exactly what the call wrote is no conflict. Red
// without the check (mutant workspace-conflict-unchecked) and when sameness is not looked at
// (mutant workspace-conflict-same-content).
func TestCommitKeepsAnotherWritersChanges(t *testing.T) {
	ws := t.TempDir()
	for p, s := range map[string]string{"d/old.txt": "old\n", "f.txt": "base\n", "del.txt": "base\n", "same.txt": "base\n",
		"before.txt": "base\n", "kept-link": ""} {
		write(t, filepath.Join(ws, p), s)
	}
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	// changed after the layer was made (ahead of its call), before the call started: seen by it
	write(t, filepath.Join(ws, "before.txt"), "seen by the call\n")
	l.Start()
	runInLayer(t, l, strings.Join([]string{
		"rm -rf d", "mkdir d", "echo new > d/new.txt", "echo call > f.txt", "rm del.txt", "echo same > same.txt",
		"echo call > before.txt", "rm kept-link", "ln -s f.txt kept-link",
	}, "; "))
	// another writer, while the call ran
	write(t, filepath.Join(ws, "d", "important.txt"), "B's\n")
	write(t, filepath.Join(ws, "f.txt"), "B's\n")
	write(t, filepath.Join(ws, "del.txt"), "B's\n")
	write(t, filepath.Join(ws, "same.txt"), "same\n")
	if err := os.Remove(filepath.Join(ws, "kept-link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("del.txt", filepath.Join(ws, "kept-link")); err != nil {
		t.Fatal(err)
	}
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", Summary(w))
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(ws, p)); return string(b) }
	for p, want := range map[string]string{"d/important.txt": "B's\n", "d/new.txt": "new\n", "f.txt": "B's\n", "del.txt": "B's\n",
		"same.txt": "same\n", "before.txt": "call\n"} {
		if got := read(p); got != want {
			t.Errorf("%s = %q after the commit, want %q", p, got, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "d", "old.txt")); !os.IsNotExist(err) {
		t.Errorf("d/old.txt, which the call deleted before anyone changed it, is still there: %v", err)
	}
	if got, _ := os.Readlink(filepath.Join(ws, "kept-link")); got != "del.txt" {
		t.Errorf("kept-link -> %q, want the other writer's del.txt", got)
	}
	for _, p := range []string{"d/important.txt", "f.txt", "del.txt", "kept-link"} {
		if why := refusedWhy(w, p); !strings.Contains(why, "another writer") {
			t.Errorf("%s: refused %q, want a conflict named", p, why)
		}
	}
	for _, p := range []string{"same.txt", "before.txt", "d/new.txt"} {
		if why := refusedWhy(w, p); why != "" {
			t.Errorf("%s refused (%s), want it applied", p, why)
		}
	}
	if len(w.Refused) != 4 {
		t.Errorf("%d refusals, want the 4 conflicts: %+v", len(w.Refused), w.Refused)
	}
}

// The child of TestCommitFinishedAfterItsServeDied: it runs a call in a layer of its own and
// is killed (SIGKILL, as the OOM killer does) in the middle of the commit.
func TestCommitKilledChild(t *testing.T) {
	root, ws := os.Getenv("WSLAYER_TEST_ROOT"), os.Getenv("WSLAYER_TEST_WS")
	if root == "" {
		t.Skip("the child of TestCommitFinishedAfterItsServeDied")
	}
	l, err := New(root, ws)
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	runInLayer(t, l, "mkdir k; i=0; while [ $i -lt 300 ]; do echo $i > k/$i; i=$((i+1)); done; echo all > k/MANIFEST; "+
		"echo new-a > a.py; echo new-b > b.py; rm gone.txt; ln -s a.py link")
	commitEntryHook = func(n int) {
		if n == 100 {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	l.Call = "call-in-the-audit"
	_, _ = l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 30, UID: -1, GID: -1, SandboxPath: ws})
	t.Fatal("the commit ended: the test hook should have killed this process")
}

// killedCommit runs TestCommitKilledChild over a workspace of its own: a layer root holding the
// layer of a commit killed after 100 changes, and its workspace.
func killedCommit(t *testing.T) (root, ws string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("SKIP: mounting an overlay for the test needs root (the allowlist and docker tests cover it end to end)")
	}
	root, ws = t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, "a.py"), "old-a\n")
	write(t, filepath.Join(ws, "b.py"), "old-b\n")
	write(t, filepath.Join(ws, "gone.txt"), "x\n")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCommitKilledChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WSLAYER_TEST_ROOT="+root, "WSLAYER_TEST_WS="+ws)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed in its commit: %v\n%s", err, out)
	}
	return root, ws
}

// A serve killed in the middle of a commit leaves a half-applied call (attack round atk24c,
// F2: 348 of 20,001 files, the call's MANIFEST missing, a root-owned staging file in the
// workspace, and the rest swept with the layer at the next start). Now the layer's journal
// keeps it from the sweep, and the next serve of the workspace finishes the commit: every
// change applied, what the killed commit applied counted without a conflict, what another
// writer changed since the call started kept, what the user deleted of the applied part after
// the kill not brought back, and the staging file gone. Red without the journal (mutant
// commit-journal-off), without the log of what was applied (commit-progress-unlogged).
func TestCommitFinishedAfterItsServeDied(t *testing.T) {
	root, ws := killedCommit(t)
	k, _ := os.ReadDir(filepath.Join(ws, "k"))
	if len(k) == 0 || len(k) >= 301 {
		t.Fatalf("the killed commit left %d of k's 301 files, want some: the kill is not mid-commit", len(k))
	}
	t.Logf("the killed commit applied %d of k's 301 files", len(k))
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Fatalf("the layer root holds %v, want the killed commit's layer", ents)
	}
	layer := filepath.Join(root, ents[0].Name())
	sweep(root)
	if _, err := os.Stat(layer); err != nil {
		t.Fatalf("the next start's sweep removed the layer of the unfinished commit: %v", err)
	}
	// what the killed commit was writing when it died, and a file another writer changed after
	// the call started, which the call also wrote (k/299, not applied yet)
	j, err := readJournal(layer)
	if err != nil {
		t.Fatalf("the killed commit's journal: %v", err)
	}
	write(t, filepath.Join(ws, "k", j.Tmp), "half a file")
	write(t, filepath.Join(ws, "k", "299"), "theirs\n")
	// the user cleans up some of what the killed commit applied (the first in its order)
	for _, n := range []string{"0", "1", "10", "100"} {
		if err := os.Remove(filepath.Join(ws, "k", n)); err != nil {
			t.Fatalf("the killed commit did not apply k/%s: %v", n, err)
		}
	}
	rs := Recover(root, ws, func() (Rules, error) {
		return Rules{Protect: policy.DefaultProtect, Quota: 1 << 30, UID: -1, GID: -1, SandboxPath: ws}, nil
	})
	if len(rs) != 1 || rs[0].Err != nil {
		t.Fatalf("Recover: %+v, want the one commit finished", rs)
	}
	// what serve's audit says of it: the call (its id in the audit log), the serve that died
	// and when its call began
	if rs[0].Call != "call-in-the-audit" {
		t.Errorf("Recover names call %q, want the one the killed commit's layer was for", rs[0].Call)
	}
	if rs[0].PID <= 0 || rs[0].PID == os.Getpid() || time.Since(rs[0].Since) > time.Minute || time.Since(rs[0].Since) < 0 {
		t.Errorf("Recover names the dead serve %d (this one %d) and its call's start %v", rs[0].PID, os.Getpid(), rs[0].Since)
	}
	w := rs[0].Changes
	t.Logf("%s", Summary(w))
	if len(w.Refused) != 1 || w.Refused[0].Path != "k/299" || !strings.Contains(w.Refused[0].Why, "another writer") {
		t.Errorf("refused %+v, want only k/299, another writer's", w.Refused)
	}
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(ws, p)); return string(b) }
	for p, want := range map[string]string{"k/MANIFEST": "all\n", "k/2": "2\n", "k/150": "150\n", "k/298": "298\n", "k/299": "theirs\n",
		"a.py": "new-a\n", "b.py": "new-b\n"} {
		if got := read(p); got != want {
			t.Errorf("%s = %q after the commit was finished, want %q", p, got, want)
		}
	}
	if k, _ := os.ReadDir(filepath.Join(ws, "k")); len(k) != 297 {
		t.Errorf("k holds %d files, want 297: the call's 301 but the 4 the user deleted after the kill", len(k))
	}
	for _, n := range []string{"0", "1", "10", "100"} {
		if _, err := os.Lstat(filepath.Join(ws, "k", n)); err == nil {
			t.Errorf("k/%s, applied by the killed commit and deleted by the user since, is back (attack round atk25a, F2)", n)
		}
	}
	if _, err := os.Lstat(filepath.Join(ws, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("gone.txt, which the call deleted, is there: %v", err)
	}
	if got, _ := os.Readlink(filepath.Join(ws, "link")); got != "a.py" {
		t.Errorf("link -> %q, want a.py", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, "k", j.Tmp)); !os.IsNotExist(err) {
		t.Errorf("the staging file the killed commit was writing is still in the workspace: %v", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("the layer root holds %v after the commit was finished, want nothing", ents)
	}
	if rs := Recover(root, ws, nil); len(rs) != 0 {
		t.Errorf("a second Recover finished %+v, want nothing left", rs)
	}
}

// A workspace whose root refuses new entries (here immutable: a serve that is not root meets
// the same where it may write below the root but not in it) still takes a call's files and
// links below the root: they are staged beside their destination. Red when they are staged in
// the root (mutant commit-staging-in-root).
func TestCommitStagesBesideWhenTheRootRefuses(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "sub", "old"), "x")
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	runInLayer(t, l, "echo a > sub/f; ln -s f sub/l")
	if out, err := exec.Command("chattr", "+i", ws).CombinedOutput(); err != nil {
		t.Skipf("SKIP: no immutable directory here (chattr +i: %v %s)", err, out)
	}
	defer exec.Command("chattr", "-i", ws).Run()
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "sub", "f")); string(b) != "a\n" || len(w.Refused) != 0 {
		t.Errorf("sub/f = %q; refused %+v: want the file applied below a root that takes no new entry", b, w.Refused)
	}
	if got, _ := os.Readlink(filepath.Join(ws, "sub", "l")); got != "f" {
		t.Errorf("sub/l -> %q, want f", got)
	}
	if ents, _ := os.ReadDir(filepath.Join(ws, "sub")); len(ents) != 3 {
		t.Errorf("sub holds %v, want old, f and l (no staging file left)", ents)
	}
}

// A call edits and deletes names that are hard links of each other (cp -al, a local git clone):
// the commit's own rename or unlink sets the change time of the other names, which is not
// another writer's change: every change is applied, no conflict (attack round atk25a, F1).
// Red when the commit's own changes count (mutant commit-own-links-conflict).
func TestCommitOwnLinksNoConflict(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "a"), "orig\n")
	write(t, filepath.Join(ws, "d", "a"), "orig\n")
	for _, p := range [][2]string{{"a", "b"}, {"d/a", "d/b"}} {
		if err := os.Link(filepath.Join(ws, p[0]), filepath.Join(ws, p[1])); err != nil {
			t.Fatal(err)
		}
	}
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	runInLayer(t, l, "echo A >> a; echo B >> b; rm -rf d")
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Refused) != 0 {
		t.Errorf("refused %+v, want every change applied", w.Refused)
	}
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(ws, p)); return string(b) }
	if read("a") != "orig\nA\n" || read("b") != "orig\nB\n" {
		t.Errorf("a = %q, b = %q after the call", read("a"), read("b"))
	}
	if _, err := os.Lstat(filepath.Join(ws, "d")); !os.IsNotExist(err) {
		t.Errorf("d, which the call deleted, is still there: %v", err)
	}
}

// A file is staged beside its destination, so it is made as a file made there is: in a setgid
// directory it takes the directory's group, not the root's (attack round atk25a, F4: staged in
// the root, it took the root's default ACL and group). Red when staged in the root (mutant
// commit-staging-in-root).
func TestCommitStagesInTheDestination(t *testing.T) {
	ws := t.TempDir()
	shared := filepath.Join(ws, "shared")
	if err := os.Mkdir(shared, 0o775); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(shared, -1, 4242); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Chmod(shared, 0o2775); err != nil {
		t.Fatal(err)
	}
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	runInLayer(t, l, "echo x > shared/new.txt")
	if _, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws}); err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(shared, "new.txt"), &st); err != nil || st.Gid != 4242 {
		t.Errorf("shared/new.txt: group %d (%v), want the setgid directory's 4242", st.Gid, err)
	}
}

// Finishing a killed commit that runs out of time keeps what it applied, the layer and the
// journal: the next try goes on from there and finishes it (attack round atk25a, F5: the rest
// was refused and the journal removed, half-applied for good). Red when a late finish ends the
// journal (mutant recover-late-finished).
func TestRecoverOutOfTimeTriesAgain(t *testing.T) {
	root, ws := killedCommit(t)
	rules := func(deadline time.Time) func() (Rules, error) {
		return func() (Rules, error) {
			return Rules{Protect: policy.DefaultProtect, Quota: 1 << 30, UID: -1, GID: -1, SandboxPath: ws, Deadline: deadline}, nil
		}
	}
	rs := Recover(root, ws, rules(time.Now().Add(-time.Second)))
	if len(rs) != 1 || rs[0].Err == nil {
		t.Fatalf("a finish past its deadline: %+v, want it failed, to be tried again", rs)
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Fatalf("the layer root holds %v after a late finish, want the layer kept", ents)
	}
	// the next start is another process: this one, which claimed the layer, is gone then
	if err := os.Rename(filepath.Join(root, ents[0].Name()), filepath.Join(root, "call-999999999-x")); err != nil {
		t.Fatal(err)
	}
	rs = Recover(root, ws, rules(time.Time{}))
	if len(rs) != 1 || rs[0].Err != nil {
		t.Fatalf("the second try: %+v, want it finished", rs)
	}
	if k, _ := os.ReadDir(filepath.Join(ws, "k")); len(k) != 301 {
		t.Errorf("k holds %d files after the second try, want 301", len(k))
	}
}

// A killed serve's pid may name another process by the next start (reused, or after a reboot):
// its journal names the serve by boot and start time, so the commit is finished all the same
// (attack round atk25a, N3). Red when the pid alone decides (mutant journal-owner-by-pid).
func TestRecoverWhenThePidIsReused(t *testing.T) {
	root, ws := killedCommit(t)
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Fatalf("the layer root holds %v, want the killed commit's layer", ents)
	}
	// The killed serve's pid now names a live process: one started after it, ticks later (a
	// process is named by its start time in clock ticks: this test's own process, started a few
	// milliseconds before the killed one on a fast machine, could share its tick and pass for it).
	time.Sleep(30 * time.Millisecond)
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	reused := filepath.Join(root, fmt.Sprintf("call-%d-reused", other.Process.Pid))
	if err := os.Rename(filepath.Join(root, ents[0].Name()), reused); err != nil {
		t.Fatal(err)
	}
	rs := Recover(root, ws, func() (Rules, error) {
		return Rules{Protect: policy.DefaultProtect, Quota: 1 << 30, UID: -1, GID: -1, SandboxPath: ws}, nil
	})
	if len(rs) != 1 || rs[0].Err != nil {
		t.Fatalf("Recover: %+v, want the commit of the serve whose pid was reused finished", rs)
	}
	if k, _ := os.ReadDir(filepath.Join(ws, "k")); len(k) != 301 {
		t.Errorf("k holds %d files, want 301", len(k))
	}
}

// A file or directory the call changed, which another writer deleted or renamed away while the
// call ran, stays deleted: the call's version is not brought back, and the result names the
// conflict (attack round atk25a, F3). What the call moved or linked itself (a rename's old name,
// a hard link's other name are still the same file in the workspace) is applied as before.
// Red without the check (mutant commit-deletion-unchecked).
func TestCommitKeepsAnotherWritersDeletions(t *testing.T) {
	ws := t.TempDir()
	for _, p := range []string{"gone.txt", "moved.txt", "sub/x.txt", "mine-rename.txt", "mine-link.txt", "plain.txt",
		"a-old.txt", "d2/x.txt", "d3/z.txt", "e.txt", "t", "t2"} {
		write(t, filepath.Join(ws, p), "base\n")
	}
	write(t, filepath.Join(ws, "t"), "T\n")
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	runInLayer(t, l, strings.Join([]string{
		"echo call >> gone.txt", "echo call >> moved.txt", "echo call > sub/y.txt",
		"mv mine-rename.txt renamed.txt", "ln mine-link.txt linked.txt", "echo call >> plain.txt",
		// the program's own moves: the old name sorts first (its whiteout is applied first), or
		// lies in a directory it then deleted, or deleted and made again
		"mv a-old.txt b-new.txt", "mv d2/x.txt from-d2.txt", "rm -rf d2", "mv d3/z.txt from-d3.txt", "rm -rf d3", "mkdir d3",
		// an editor's save: the old file kept under a new name, a new one at the old (atk26b, F1)
		"mv e.txt e.txt.bak", "echo new > e.txt",
		// two files changed; the other writer renames one onto the other (atk26b, F3)
		"echo call >> t", "chmod 600 t2",
	}, "; "))
	// another writer, while the call ran
	for _, p := range []string{"gone.txt", "sub/x.txt", "sub"} {
		if err := os.Remove(filepath.Join(ws, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(ws, "moved.txt"), filepath.Join(ws, "elsewhere.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(ws, "t"), filepath.Join(ws, "t2")); err != nil {
		t.Fatal(err)
	}
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", Summary(w))
	for _, p := range []string{"gone.txt", "moved.txt", "sub", "mine-rename.txt", "a-old.txt", "d2", "d3/z.txt", "t"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); !os.IsNotExist(err) {
			t.Errorf("%s is in the workspace after the commit (%v), want it gone", p, err)
		}
	}
	read := func(p string) string { b, _ := os.ReadFile(filepath.Join(ws, p)); return string(b) }
	for p, want := range map[string]string{"elsewhere.txt": "base\n", "renamed.txt": "base\n", "linked.txt": "base\n",
		"mine-link.txt": "base\n", "plain.txt": "base\ncall\n", "b-new.txt": "base\n", "from-d2.txt": "base\n", "from-d3.txt": "base\n",
		"e.txt": "new\n", "e.txt.bak": "base\n", "t2": "T\n"} {
		if got := read(p); got != want {
			t.Errorf("%s = %q after the commit, want %q", p, got, want)
		}
	}
	for _, p := range []string{"gone.txt", "moved.txt", "sub", "t"} {
		if why := refusedWhy(w, p); !strings.Contains(why, "deleted or renamed away in the workspace by another writer") {
			t.Errorf("%s: refused %q, want the other writer's deletion named", p, why)
		}
	}
	if why := refusedWhy(w, "t2"); !strings.Contains(why, "changed in the workspace by another writer") {
		t.Errorf("t2: refused %q, want the other writer's rename onto it named", why)
	}
	if len(w.Refused) != 5 {
		t.Errorf("%d refusals, want the 4 deletions and t2: %+v", len(w.Refused), w.Refused)
	}
}

// A call whose only change is a rename, its old name sorting first: the new name is the call's
// own move, not a deletion by another writer (the judgement is made before the old name's
// whiteout is applied).
func TestCommitAppliesTheCallsOwnRename(t *testing.T) {
	ws := t.TempDir()
	write(t, filepath.Join(ws, "a.txt"), "base\n")
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	runInLayer(t, l, "mv a.txt b.txt")
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "b.txt")); err != nil || string(b) != "base\n" || len(w.Refused) != 0 {
		t.Errorf("b.txt %q %v after the commit, refused %+v: want the call's rename applied", b, err, w.Refused)
	}
	if _, err := os.Lstat(filepath.Join(ws, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("a.txt still there: %v", err)
	}
}
