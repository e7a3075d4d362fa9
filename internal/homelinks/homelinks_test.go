package homelinks

import (
	"os"
	"path/filepath"
	"testing"
)

// Find names a home's dot-files, ~/bin and the configs in its dot-directories and ~/.config
// that are links into the workspace, and nothing else: a shortcut (~/src), a link to the
// workspace whole, a link outside it.
func TestFindHomeLinksIntoTheWorkspace(t *testing.T) {
	home, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	for _, d := range []string{"cursor", "nvim", "src", "bin", "x"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, "cursor", "mcp.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(ws, "bashrc"), []byte(""), 0o644)
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	os.MkdirAll(filepath.Join(home, ".config"), 0o755)
	links := map[string]string{
		".cursor/mcp.json": filepath.Join(ws, "cursor", "mcp.json"),
		".bashrc":          filepath.Join(ws, "bashrc"),
		".config/nvim":     filepath.Join(ws, "nvim"),
		"bin":              filepath.Join(ws, "bin"),
		"src":              filepath.Join(ws, "src"),
		".project":         ws,
		".elsewhere":       other,
	}
	for l, target := range links {
		if err := os.Symlink(target, filepath.Join(home, l)); err != nil {
			t.Fatal(err)
		}
	}
	f := Find([]string{home}, ws)
	want := map[string]string{
		filepath.Join(ws, "cursor", "mcp.json"): "~/.cursor/mcp.json",
		filepath.Join(ws, "bashrc"):             "~/.bashrc",
		filepath.Join(ws, "nvim"):               "~/.config/nvim",
		filepath.Join(ws, "bin"):                "~/bin",
	}
	if len(f.Targets) != len(want) {
		t.Errorf("found %v, want %v", f.Targets, want)
	}
	for target, link := range want {
		if f.Targets[target] != link {
			t.Errorf("%s: found %q, want %q (all: %v)", target, f.Targets[target], link, f.Targets)
		}
	}
	pats := f.Patterns(ws)
	if len(pats) != 4 || pats[0] != "bashrc" || pats[2] != "cursor/mcp.json" {
		t.Errorf("patterns %q", pats)
	}
}

// A home of more entries than MaxEntries is looked at up to the bound, and says so.
func TestFindIsBounded(t *testing.T) {
	home := t.TempDir()
	for i := 0; i <= MaxEntries; i++ {
		os.WriteFile(filepath.Join(home, ".f"+string(rune('a'+i%26))+itoa(i)), nil, 0o644)
	}
	if f := Find([]string{home}, t.TempDir()); !f.Cut {
		t.Errorf("a home of %d entries was not cut", MaxEntries+1)
	}
}

func itoa(i int) string {
	return string([]byte{byte('0' + i/1000%10), byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)})
}
