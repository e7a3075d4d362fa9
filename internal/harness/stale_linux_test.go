package harness

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	if !ok {
		t.Fatal("no start time for this process")
	}
	goneDir := mk("mcpsandbox-harness-111", fmt.Sprintf("%d %s\n", gone.Process.Pid, start))
	os.Chmod(filepath.Join(goneDir, "home"), 0o555) // as a sandbox may leave it
	goneOwn := mk("mcpsandbox-harness-own-222", fmt.Sprintf("%d %s\n", gone.Process.Pid, start))
	reused := mk("mcpsandbox-harness-333", fmt.Sprintf("%d 1\n", os.Getpid())) // this pid, another start: gone
	live := mk("mcpsandbox-harness-444", fmt.Sprintf("%d %s\n", os.Getpid(), start))
	unmarked := mk("mcpsandbox-harness-555", "")
	other := mk("something-else-666", fmt.Sprintf("%d %s\n", gone.Process.Pid, start))
	link := filepath.Join(parent, "mcpsandbox-harness-777")
	os.Symlink(goneDir, link)
	removed := removeStaleIn(parent)
	for _, d := range []string{goneDir, goneOwn, reused} {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s (its run gone) is still there", filepath.Base(d))
		}
	}
	for _, d := range []string{live, unmarked, other} {
		if _, err := os.Lstat(d); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(d), err)
		}
	}
	if len(removed) != 3 || strings.Contains(strings.Join(removed, " "), "777") {
		t.Errorf("removed %v", removed)
	}
	// a fresh arena is marked with this run
	a, err := newArena(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, d := range []string{a.Root, a.Own} {
		if b, err := os.ReadFile(filepath.Join(d, runMarker)); err != nil || !strings.HasPrefix(string(b), fmt.Sprintf("%d %s", os.Getpid(), start)) {
			t.Errorf("%s's marker: %q %v", d, b, err)
		}
	}
	if got := removeStaleIn(filepath.Dir(a.Root)); strings.Contains(strings.Join(got, " "), a.Root) {
		t.Errorf("a live run's arena was removed: %v", got)
	}
}
