package generate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A client's write that lands while init writes its config (after init's last look, before its
// rename; in place, or a file renamed over the name as clients save) is not lost: init puts the
// client's version back (or never replaces it) and says the file changed, where it replaced it
// and said it wrote (atk40 F2). A file created in the window is not replaced either. Red with
// mutant init-write-lost-update.
func TestApplyKeepsAWriteThatLandsInItsWindow(t *testing.T) {
	const old, ours, theirs = `{"numStartups": 1}`, `{"numStartups": 1, "mcpServers": {"sandbox": {}}}`, `{"numStartups": 2, "client_key_2": true}`
	write := map[string]func(path string){
		"in place": func(path string) {
			if err := os.WriteFile(path, []byte(theirs), 0o600); err != nil {
				t.Error(err)
			}
		},
		"renamed over": func(path string) {
			tmp := path + ".client-tmp"
			if err := os.WriteFile(tmp, []byte(theirs), 0o600); err != nil {
				t.Error(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Error(err)
			}
		},
	}
	t.Cleanup(func() { testWindow = nil })
	for _, existed := range []bool{true, false} {
		for _, stage := range []string{"before-check", "before-swap"} {
			for how, w := range write {
				if !existed && how == "in place" {
					continue
				}
				name := stage + ", " + how
				if !existed {
					name += ", a new file"
				}
				t.Run(name, func(t *testing.T) {
					dir := t.TempDir()
					path := filepath.Join(dir, "mcp.json")
					c := FileChange{Path: path, New: []byte(ours), Mode: 0o600, BackupDir: filepath.Join(dir, "backups"), Existed: existed}
					if existed {
						c.Old = []byte(old)
						if err := os.WriteFile(path, c.Old, 0o600); err != nil {
							t.Fatal(err)
						}
					}
					fired := false
					testWindow = func(s, target string) {
						if s == stage && !fired {
							fired = true
							w(target)
						}
					}
					defer func() { testWindow = nil }()
					_, err := Apply([]FileChange{c})
					if !fired {
						t.Fatal("the window was not reached")
					}
					got, _ := os.ReadFile(path)
					if string(got) != theirs {
						t.Errorf("the config holds %s, want the client's write %s (err %v)", got, theirs, err)
					}
					if err == nil || !strings.Contains(err.Error(), "another program") || !strings.Contains(err.Error(), path) {
						t.Errorf("Apply: %v, want an error naming %s and the other program's write", err, path)
					}
					if ents, _ := os.ReadDir(dir); len(ents) > 2 {
						var names []string
						for _, e := range ents {
							names = append(names, e.Name())
						}
						t.Errorf("left beside the config: %v", names)
					}
				})
			}
		}
	}
	t.Run("control: no other write", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
			t.Fatal(err)
		}
		rs, err := Apply([]FileChange{{Path: path, Old: []byte(old), New: []byte(ours), Mode: 0o600, Existed: true}})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != ours {
			t.Errorf("the config holds %s, want init's", got)
		}
		if b, _ := os.ReadFile(rs[0].Backup); string(b) != old {
			t.Errorf("the backup holds %s, want the file as read", b)
		}
	})
}
