package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trial36 F12: a run killed outright left its arenas (canary .ssh/id_rsa) in /var/tmp for good.
// A later run removes the marked arena directories of a run that is gone, and only those: not
// a live run's, not an unmarked directory, not a symlink, not another name. Red without the
// removal (mutant harness-stale-arenas-kept).
func TestStaleArenasOfAGoneRunAreRemoved(t *testing.T) {
	parent := t.TempDir()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("no true: %v", err)
	}
	mk := func(name, marker string) string {
		d := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(d, "home", ".ssh"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "home", ".ssh", "id_rsa"), []byte("fake"), 0o644)
		if marker != "" {
			os.WriteFile(filepath.Join(d, runMarker), []byte(marker), 0o644)
		}
		return d
	}
	start, ok := processStart(os.Getpid())
	ns, boot := runPlace()
	if !ok || ns == "" || boot == "" {
		t.Fatalf("no start time (%v), pid namespace (%q) or boot id (%q) for this process", ok, ns, boot)
	}
	marker := func(pid int, start string) string { return fmt.Sprintf("%d %s %s %s\n", pid, start, ns, boot) }
	goneDir := mk("mcpsandbox-harness-111", marker(gone.Process.Pid, start))
	os.Chmod(filepath.Join(goneDir, "home"), 0o555) // as a sandbox may leave it
	goneOwn := mk("mcpsandbox-harness-own-222", marker(gone.Process.Pid, start))
	reused := mk("mcpsandbox-harness-333", marker(os.Getpid(), "1")) // this pid, another start: gone
	live := mk("mcpsandbox-harness-444", marker(os.Getpid(), start))
	unmarked := mk("mcpsandbox-harness-555", "")
	other := mk("something-else-666", marker(gone.Process.Pid, start))
	link := filepath.Join(parent, "mcpsandbox-harness-777")
	os.Symlink(goneDir, link)
	// atk36b F2: a run of another pid namespace (a container's, unshare's sharing /var/tmp) is
	// not judged by its pid, which means nothing here; a run of an earlier boot is gone; a
	// marker that names no namespace is trusted only once a day old
	otherNS := mk("mcpsandbox-harness-888", fmt.Sprintf("%d %s pid:[1] %s\n", gone.Process.Pid, start, boot))
	otherBoot := mk("mcpsandbox-harness-999", fmt.Sprintf("%d %s %s 00000000-0000-0000-0000-000000000000\n", os.Getpid(), start, ns))
	oldFresh := mk("mcpsandbox-harness-aaa", fmt.Sprintf("%d %s\n", gone.Process.Pid, start))
	oldAged := mk("mcpsandbox-harness-bbb", fmt.Sprintf("%d %s\n", gone.Process.Pid, start))
	otherNSAged := mk("mcpsandbox-harness-ccc", fmt.Sprintf("%d %s pid:[1] %s\n", os.Getpid(), start, boot))
	dayAgo := time.Now().Add(-2 * oldMarkerAge)
	for _, d := range []string{oldAged, otherNSAged} {
		os.Chtimes(filepath.Join(d, runMarker), dayAgo, dayAgo)
	}
	unmarkedAged := mk("mcpsandbox-harness-ddd", "") // an older binary's, or killed before its marking
	os.Chtimes(unmarkedAged, dayAgo, dayAgo)
	removed := removeStaleIn(parent)
	for _, d := range []string{goneDir, goneOwn, reused, otherBoot, oldAged, otherNSAged, unmarkedAged} {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s (its run gone) is still there", filepath.Base(d))
		}
	}
	for _, d := range []string{live, unmarked, other, otherNS, oldFresh} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
	if len(removed) != 7 || strings.Contains(strings.Join(removed, " "), "777") {
		t.Errorf("removed %v", removed)
	}
	// a fresh arena is marked with this run
	a, err := newArena(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, d := range []string{a.Root, a.Own} {
		if b, err := os.ReadFile(filepath.Join(d, runMarker)); err != nil || string(b) != marker(os.Getpid(), start) {
			t.Errorf("%s's marker: %q %v", d, b, err)
		}
	}
	if got := removeStaleIn(filepath.Dir(a.Root)); strings.Contains(strings.Join(got, " "), a.Root) {
		t.Errorf("a live run's arena was removed: %v", got)
	}
}

// TestSweepFollowsNoSwappedLink: the sweep that makes a sandbox's read-only tree removable
// (verify's removal of a gone run's arena, Arena.Close) reaches each directory by a descriptor
// beneath its parent's: a directory another user swaps for a symlink between the listing and
// the chmod (the arena's outside/ is world-writable) does not take the chmod elsewhere
// (atk36b F1: root made 0700 directories 0755). A tree the sandbox left read-only is still
// removed. Red with harness-sweep-by-path.
func TestSweepFollowsNoSwappedLink(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	arena := filepath.Join(base, "mcpsandbox-harness-x")
	for _, d := range []string{victim, filepath.Join(arena, "outside", "x", "a"), filepath.Join(arena, "ws", "ro", "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(victim, 0o700)
	os.Chmod(filepath.Join(arena, "ws", "ro", "deep"), 0o555)
	os.Chmod(filepath.Join(arena, "ws", "ro"), 0o555) // as a sandbox may leave it
	swapped := false
	sweepHook = func(p string) {
		if filepath.Base(p) == "a" && !swapped { // listed as a directory; a link by the time it is reached
			swapped = true
			a := filepath.Join(arena, "outside", "x", "a")
			if err := os.Rename(a, a+".was"); err != nil {
				t.Error(err)
			}
			if err := os.Symlink(victim, a); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { sweepHook = nil }()
	makeRemovable(arena)
	if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory a swapped link named: %v %v, want 0700 as it was: the sweep followed the link", fi.Mode(), err)
	}
	if os.Geteuid() != 0 && !swapped {
		t.Error("the sweep never reached outside/x/a: the test swapped nothing")
	}
	if err := os.RemoveAll(arena); err != nil {
		t.Errorf("the arena the sandbox left read-only is not removable after the sweep: %v", err)
	}
}

// TestArenaRemovedDuringTheRunIsAnError: a run whose scratch directory was removed or replaced
// while it ran (another verify judging it stale, a tmp cleaner) compared its detectors against
// nothing: ERROR, never CONTAINED (atk36b F2: such a run said PASS). Red with
// harness-arena-vanished-passes.
func TestArenaRemovedDuringTheRunIsAnError(t *testing.T) {
	for _, how := range []string{"removed", "replaced"} {
		a, err := newArena(nil)
		if err != nil {
			t.Fatal(err)
		}
		r := &run{a: a}
		var res Result
		r.verdict(&res, nil)
		if res.Outcome != Contained {
			t.Fatalf("an untouched arena with nothing seen: %s (%s), want CONTAINED", res.Outcome, res.Reason)
		}
		os.RemoveAll(a.Root)
		if how == "replaced" {
			os.Mkdir(a.Root, 0o755)
		}
		res = Result{}
		r.verdict(&res, nil)
		if res.Outcome != Error || !strings.Contains(res.Reason, "removed or replaced during the run") {
			t.Errorf("an arena %s during the run: %s (%q), want ERROR saying so", how, res.Outcome, res.Reason)
		}
		a.Close()
	}
}
