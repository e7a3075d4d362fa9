package generate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init refuses to pin what serve would refuse at its start, before anything is written, saying
// what it is: a script (npm's bin links are), a file that is not an ELF binary, a path that does
// not exist; a real binary pins.
func TestPinRefusesWhatServeCannotRun(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "tool")
	os.WriteFile(script, []byte("#!/usr/bin/env node\nconsole.log(1)\n"), 0o755)
	link := filepath.Join(dir, "tool-link")
	os.Symlink(script, link)
	data := filepath.Join(dir, "data")
	os.WriteFile(data, []byte("hello"), 0o755)
	for path, want := range map[string]string{
		link: script + " is a script (it starts with #!), not an ELF binary", data: data + " is not an ELF binary",
		filepath.Join(dir, "nosuch", "tool"): filepath.Join(dir, "nosuch", "tool") + " does not exist: give the absolute path of an installed program",
	} {
		if _, err := Pin(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Pin(%s): %v, want %q", path, err, want)
		}
	}
	if c, err := Pin("wc"); err != nil || c.SHA256 == "" {
		t.Errorf("Pin(wc): %+v %v", c, err)
	}
}
