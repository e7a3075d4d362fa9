package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// The user edits a file after the call's layer was made ahead (the pool) and before the call:
// the call saw the edit, so its rewrite of the file is applied, no conflict. Another writer's
// edit while the call runs is kept, and the call's rewrite of that file is listed as a
// conflict, while its other writes land. Red when the call's start is not marked (mutant
// workspace-layer-start-unmarked: the layer counts from when it was made, so the edit before
// the call is taken for a conflict) and without the conflict check (mutant
// workspace-conflict-unchecked: the edit during the call is overwritten).
func TestCallKeepsEditsMadeWhileItRan(t *testing.T) {
	e := layeredExecutor(t)
	userWrite := func(name, s string) {
		p := filepath.Join(e.ws, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	userWrite("notes.txt", "first\n")
	userWrite("edited.txt", "first\n")
	pooledLayer(t, e)
	time.Sleep(20 * time.Millisecond) // past the kernel's coarse clock's tick
	userWrite("notes.txt", "the user's edit before the call\n")
	res := runPython(t, e, "open('notes.txt', 'a').write('the call\\n')")
	if got, _ := os.ReadFile(filepath.Join(e.ws, "notes.txt")); string(got) != "the user's edit before the call\nthe call\n" {
		t.Errorf("notes.txt = %q after a call appending to the user's edit made before it (refused: %v)", got, refusedPaths(res.Workspace))
	}

	// an edit while the call runs: made once the program is seen running (and a few ticks on)
	const marker = "conflict-probe-7c1f"
	done := make(chan struct{})
	go func() {
		defer close(done)
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if running(marker) {
				// The command line is there from the exec, a millisecond after the call's start
				// on a fast machine: an edit then can fall in the coarse clock's tick the call
				// started in, which changedSince lets pass (its ctime is that tick's). Edited two
				// ticks of the slowest HZ later, still long before the program writes.
				time.Sleep(25 * time.Millisecond)
				userWrite("edited.txt", "the user's edit during the call\n")
				return
			}
		}
	}()
	res = runPython(t, e, "import time\n# "+marker+"\ntime.sleep(1.5)\nopen('edited.txt', 'w').write('the call\\n')\nopen('other.txt', 'w').write('the call\\n')")
	<-done
	if got, _ := os.ReadFile(filepath.Join(e.ws, "edited.txt")); string(got) != "the user's edit during the call\n" {
		t.Errorf("edited.txt = %q: the user's edit during the call was overwritten", got)
	}
	if why := refusedPaths(res.Workspace)["edited.txt"]; !strings.Contains(why, "another writer") {
		t.Errorf("edited.txt: refused %q, want a conflict named (%+v)", why, res.Workspace)
	}
	if got, _ := os.ReadFile(filepath.Join(e.ws, "other.txt")); string(got) != "the call\n" {
		t.Errorf("other.txt = %q, want the call's write beside the conflict", got)
	}
}

// running says whether a process whose command line holds marker is running.
func running(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(marker)) {
			return true
		}
	}
	return false
}

// A file the call changed, which the user deletes while the call runs, is never brought back
// silently: a root serve keeps the deletion and lists a conflict; a serve that is not root (no
// file handle in its overlay marks, so the call's own move cannot be told apart) writes the
// call's version back and names it in the result (trial27: it came back without a word). Run
// as uid 65534 by TestWorkspaceLayerUnprivileged.
func TestDeletionWhileRunningNeverSilent(t *testing.T) {
	e := layeredExecutor(t)
	p := filepath.Join(e.ws, "victim.txt")
	if err := os.WriteFile(p, []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chown(p, 65534, 65534)
	dir := filepath.Join(e.ws, "vdir")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "f"), []byte("base\n"), 0o644)
	os.Chown(dir, 65534, 65534)
	os.Chown(filepath.Join(dir, "f"), 65534, 65534)
	const marker = "deletion-probe-5d2a"
	deleted := removeWhenHeld(marker, []string{"victim.txt", "f"}, p, dir)
	res := runPython(t, e, "import time\n# "+marker+"\nf = open('victim.txt', 'a')\nf.write('the call\\n')\nf.flush()\n"+
		"g = open('vdir/f', 'a')\ng.write('the call\\n')\ng.flush()\ntime.sleep(1.5)\nf.close()\ng.close()")
	if !<-deleted {
		t.Fatal("the program was not seen holding victim.txt: nothing was deleted, the test tests nothing")
	}
	got, err := os.ReadFile(p)
	summary := wslayer.Summary(res.Workspace)
	_, dirErr := os.Stat(dir)
	if os.Geteuid() == 0 {
		if err == nil || !strings.Contains(refusedPaths(res.Workspace)["victim.txt"], "deleted or renamed away") {
			t.Errorf("root: victim.txt = %q (%v) after the user deleted it mid-call, want it gone and a conflict listed:\n%s", got, err, summary)
		}
		if dirErr == nil || !strings.Contains(refusedPaths(res.Workspace)["vdir"], "deleted or renamed away") {
			t.Errorf("root: vdir (%v) after the user deleted it mid-call, want it gone and a conflict listed:\n%s", dirErr, summary)
		}
		return
	}
	if string(got) != "base\nthe call\n" || res.Workspace == nil || !strings.Contains(summary, "written back though gone from the workspace") {
		t.Errorf("not root: victim.txt = %q (%v), want the call's version written back and named in the result:\n%s", got, err, summary)
	}
	// the directory is named, not each file beneath it
	if res.Workspace != nil && !slices.Equal(res.Workspace.Restored, []string{"vdir", "victim.txt"}) || dirErr != nil {
		t.Errorf("not root: written back %v (vdir: %v), want [vdir victim.txt]:\n%s", res.Workspace.Restored, dirErr, summary)
	}
}

// removeWhenHeld removes paths (as the user would, mid-call) once the program whose command line
// holds marker has every file named in held open; it says whether it did, within 15 s.
func removeWhenHeld(marker string, held []string, paths ...string) <-chan bool {
	done := make(chan bool, 1)
	go func() {
		for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if !slices.ContainsFunc(held, func(n string) bool { return !holdsOpen(marker, n) }) {
				ok := true
				for _, p := range paths {
					ok = os.RemoveAll(p) == nil && ok
				}
				done <- ok
				return
			}
		}
		done <- false
	}()
	return done
}

// holdsOpen says whether a process whose command line holds marker has a file named name open.
func holdsOpen(marker, name string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, d := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline")); err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		fds, _ := os.ReadDir(filepath.Join("/proc", d.Name(), "fd"))
		for _, fd := range fds {
			if l, _ := os.Readlink(filepath.Join("/proc", d.Name(), "fd", fd.Name())); filepath.Base(l) == name {
				return true
			}
		}
	}
	return false
}

// A call that rewrites a file the user then deletes mid-call, and removes another file holding
// the same new bytes, made no move: the rewrite is named written back though gone, as any is
// (atk38b F2: content alone made it a move, and it came back without a word). A root serve
// keeps the deletion. Run as uid 65534 by TestWorkspaceLayerUnprivileged; red there with mutant
// workspace-own-move-content-only.
func TestRewriteWithRemovedTwinNeverSilent(t *testing.T) {
	e := layeredExecutor(t)
	for n, c := range map[string]string{"X": "the user's draft\n", "Y": "same\n"} {
		p := filepath.Join(e.ws, n)
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chown(p, 65534, 65534)
	}
	const marker = "twin-probe-8c1e"
	deleted := removeWhenHeld(marker, []string{"X"}, filepath.Join(e.ws, "X"))
	res := runPython(t, e, "import os, time\n# "+marker+"\nf = open('X', 'w')\nf.write('same\\n')\nf.flush()\n"+
		"time.sleep(1.5)\nf.close()\nos.remove('Y')")
	if !<-deleted {
		t.Fatal("the program was not seen holding X: nothing was deleted, the test tests nothing")
	}
	summary := wslayer.Summary(res.Workspace)
	got, err := os.ReadFile(filepath.Join(e.ws, "X"))
	if os.Geteuid() == 0 {
		if err == nil || !strings.Contains(refusedPaths(res.Workspace)["X"], "deleted or renamed away") {
			t.Errorf("root: X = %q (%v) after the user deleted it mid-call, want it gone and a conflict listed:\n%s", got, err, summary)
		}
		return
	}
	if string(got) != "same\n" || res.Workspace == nil || !slices.Equal(res.Workspace.Restored, []string{"X"}) {
		t.Errorf("not root: X = %q (%v), restored %v: want the call's version written back and named:\n%s", got, err, res.Workspace.Restored, summary)
	}
}

// A plain rename by the call is its own move, never "written back though gone" (trial38 F4:
// a serve that is not root, with no file handles in its overlay marks, said so of every `mv a
// b`'s new name): matched by content with the file it removed. Both ends land, nothing is
// named restored; run as uid 65534 by TestWorkspaceLayerUnprivileged. Red there with mutant
// workspace-own-move-unmatched.
func TestOwnRenameNotRestored(t *testing.T) {
	e := layeredExecutor(t)
	for _, n := range []string{"a.txt", "sub/b.txt"} {
		p := filepath.Join(e.ws, n)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("content of "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chown(filepath.Dir(p), 65534, 65534)
		os.Chown(p, 65534, 65534)
	}
	res := runPython(t, e, "import os\nos.rename('a.txt', 'renamed.txt')\nos.rename('sub/b.txt', 'b-moved.txt')")
	summary := wslayer.Summary(res.Workspace)
	if res.Workspace == nil || len(res.Workspace.Restored) != 0 || strings.Contains(summary, "written back though gone") {
		t.Errorf("a plain rename was named written back though gone:\n%s", summary)
	}
	for n, want := range map[string]string{"renamed.txt": "content of a.txt\n", "b-moved.txt": "content of sub/b.txt\n"} {
		if got, err := os.ReadFile(filepath.Join(e.ws, n)); err != nil || string(got) != want {
			t.Errorf("%s = %q (%v), want the moved file", n, got, err)
		}
	}
	for _, n := range []string{"a.txt", "sub/b.txt"} {
		if _, err := os.Lstat(filepath.Join(e.ws, n)); !os.IsNotExist(err) {
			t.Errorf("%s still there after the call moved it (%v)", n, err)
		}
	}
}
