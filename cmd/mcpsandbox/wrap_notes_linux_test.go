package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init --wrap says which wrap.write directory the server's uid cannot write: as root the server
// runs as nobody, and a directory root owns (0755) fails its every write while the start check
// passes (trial35 F2). Red with mutant wrap-write-owner-unchecked.
func TestInitWrapNotesAnUnwritableWriteDir(t *testing.T) {
	dir := t.TempDir()
	notes := filepath.Join(dir, "notes")
	os.Mkdir(notes, 0o755)
	if os.Geteuid() != 0 {
		os.Chmod(notes, 0o555)
		defer os.Chmod(notes, 0o755)
	}
	file := filepath.Join(dir, "fs.toml")
	text := "version = 1\nscheme = \"wrap\"\nname = \"fs\"\n[wrap]\ncommand = [\"npx\", \"-y\", \"srv\"]\nwrite = [\"" + notes + "\"]\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	printWriteDirNotes(&out, file)
	want := "is in wrap.write but not"
	if os.Geteuid() == 0 {
		want = "fix: chown -R 65534:65534 " + notes
	}
	if !strings.Contains(out.String(), want) {
		t.Errorf("init --wrap's notes lack %q: %q", want, out.String())
	}
}
