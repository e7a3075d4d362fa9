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

// A relative path is the file it names from the current directory, as a shell runs it: "./wc"
// pins that file, not the wc found in the fixed PATH.
func TestPinRelativePathIsThatFile(t *testing.T) {
	dir := t.TempDir()
	real, err := os.ReadFile("/usr/bin/wc")
	if err != nil {
		t.Skipf("no /usr/bin/wc to copy: %v", err)
	}
	// A different binary of the same name: a copy of wc with one byte appended.
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	mine := filepath.Join(dir, "bin", "wc")
	if err := os.WriteFile(mine, append(real, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, arg := range []string{"./bin/wc", "bin/wc"} {
		c, err := Pin(arg)
		if err != nil {
			t.Fatalf("Pin(%s): %v", arg, err)
		}
		if c.Path != mine || c.Name != "wc" {
			t.Errorf("Pin(%s) = %s named %s, want %s named wc", arg, c.Path, c.Name, mine)
		}
	}
	if _, err := Pin("./nosuch"); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "nosuch")+" does not exist") {
		t.Errorf("Pin(./nosuch): %v, want it named from the current directory", err)
	}
}

// A binary whose file name cannot be a command's name (a space in it) is refused by Pin, as the
// --allow it came from, with the way on (a link under a valid name, which pins the same binary);
// it used to be taken, and the policy built from it then refused as
// "invalid policy: allowlist.commands[0].name" (a new user's trial).
func TestPinNamesAnInvalidCommandName(t *testing.T) {
	wc, err := Pin("wc")
	if err != nil {
		t.Skip("no wc here")
	}
	dir := t.TempDir()
	spaced := filepath.Join(dir, "my wc")
	b, _ := os.ReadFile(wc.Path)
	os.WriteFile(spaced, b, 0o755)
	if _, err := Pin(spaced); err == nil || !strings.Contains(err.Error(), `its name "my wc" is what clients ask for`) || !strings.Contains(err.Error(), "symbolic link to it") {
		t.Fatalf("Pin(%q): %v", spaced, err)
	}
	link := filepath.Join(dir, "mywc")
	os.Symlink(spaced, link)
	if c, err := Pin(link); err != nil || c.Name != "mywc" || c.Path != spaced || c.SHA256 != wc.SHA256 {
		t.Fatalf("Pin(%s), the way on: %+v %v", link, c, err)
	}
}

// trial37 F13: "--allow go" said only that go is not in serve's fixed PATH; the user's PATH had
// it at /usr/local/go/bin/go, the path to give: the refusal names it (never pins it itself).
func TestPinNamesWhereTheUsersPATHHasIt(t *testing.T) {
	mine := t.TempDir()
	tool := filepath.Join(mine, "mcps-test-tool")
	if err := os.WriteFile(tool, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "relative:"+mine)
	_, err := Pin("mcps-test-tool")
	want := `"mcps-test-tool" is not in serve's PATH (` + strings.Join(SearchPATH, ":") + "); your PATH has " + tool + ": --allow " + tool
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Pin("mcps-test-tool"); err == nil || !strings.Contains(err.Error(), "nor in yours: install it or give its absolute path") {
		t.Fatalf("in neither: %v", err)
	}
}
