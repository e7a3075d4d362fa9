package generate

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func backupsOf(t *testing.T, dir, prefix string) []string {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && strings.Contains(e.Name(), ".bak-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// Six inits do not leave six backups: the newest KeepBackups stay, holding the latest old
// files, and the oldest (the file before init first changed it).
func TestBackupsKeepTheNewest(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	os.WriteFile(filepath.Join(dir, "settings.json.bak-19990101-000000.keep"), []byte("not ours"), 0o600)
	for i := 1; i <= 6; i++ {
		if _, err := WriteFileSafely(p, []byte("v"+strconv.Itoa(i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var held []string
	for _, b := range backupsOf(t, dir, "settings.json") {
		c, _ := os.ReadFile(filepath.Join(dir, b))
		held = append(held, string(c))
	}
	slices.Sort(held)
	if !slices.Equal(held, []string{"not ours", "v1", "v3", "v4", "v5"}) {
		t.Errorf("backups hold %v, want the oldest (v1), the newest %d (v3 v4 v5) and the file that is not one of ours", held, KeepBackups)
	}
}

// A client config inside the project (VS Code's .vscode/mcp.json) is backed up outside the
// project, under the state directory, never beside it for git to pick up; Undo puts it back.
func TestProjectBackupsOutsideTheProject(t *testing.T) {
	home, proj, state := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	env := Env{Home: home, ConfigDir: filepath.Join(home, ".config"), Project: proj}
	tgt, err := ResolveTarget("vscode", env)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(tgt.Path), 0o755)
	os.WriteFile(tgt.Path, []byte("{\"servers\": {}}\n"), 0o644)
	c, err := ClientChange(tgt, "sandbox", NewServerEntry("/b", "/p"), false)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Apply([]FileChange{c})
	if err != nil {
		t.Fatal(err)
	}
	if bs := backupsOf(t, filepath.Dir(tgt.Path), "mcp.json"); len(bs) != 0 {
		t.Errorf("backups inside the project: %v", bs)
	}
	if !strings.HasPrefix(rs[0].Backup, filepath.Join(state, "mcpsandbox", "backups")+string(filepath.Separator)) {
		t.Errorf("the backup is at %q, not under the state directory", rs[0].Backup)
	}
	if !strings.Contains(DescribeWrite(rs[0]), rs[0].Backup) {
		t.Errorf("init does not say where the backup went: %s", DescribeWrite(rs[0]))
	}
	if err := UndoAll(rs); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tgt.Path); string(b) != "{\"servers\": {}}\n" {
		t.Errorf("undo: %s", b)
	}
}

// A config with another name (a hard link) is refused, both names unchanged: the atomic
// replace would split them. Nothing else is left behind (no backup).
func TestWriteRefusesAHardLinkedConfig(t *testing.T) {
	dir := t.TempDir()
	p, other := filepath.Join(dir, "settings.json"), filepath.Join(dir, "dotfiles-settings.json")
	os.WriteFile(p, []byte("{}"), 0o600)
	if err := os.Link(p, other); err != nil {
		t.Skip("SKIP: no hard links here:", err)
	}
	_, err := WriteFileSafely(p, []byte(`{"a": 1}`), 0o600)
	if err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Fatalf("a hard-linked config: %v", err)
	}
	for _, f := range []string{p, other} {
		if b, _ := os.ReadFile(f); string(b) != "{}" {
			t.Errorf("%s changed: %s", f, b)
		}
	}
	if bs := backupsOf(t, dir, "settings.json"); len(bs) != 0 {
		t.Errorf("backups left: %v", bs)
	}
}

// A config that is a link into a git work tree (a dotfiles repository) keeps its backups out of
// that tree, where a project's go: beside the target they were untracked files a `git add -A`
// published, env values and all (trial32 F17).
func TestBackupOfAFileInAWorkTreeStaysOutOfIt(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	repo := t.TempDir()
	os.Mkdir(filepath.Join(repo, ".git"), 0o755)
	target := filepath.Join(repo, "gemini-settings.json")
	os.WriteFile(target, []byte(`{"mcpServers": {}}`), 0o600)
	link := filepath.Join(t.TempDir(), "settings.json")
	os.Symlink(target, link)
	res, err := WriteFileSafely(link, []byte(`{"mcpServers": {"a": {}}}`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if res.Backup == "" || !strings.HasPrefix(res.Backup, filepath.Join(state, "mcpsandbox", "backups")+string(filepath.Separator)) {
		t.Errorf("the backup is at %q, want it under %s", res.Backup, filepath.Join(state, "mcpsandbox", "backups"))
	}
	// and a file in the tree reached by no link (a home that is itself a work tree)
	direct := filepath.Join(repo, "direct.json")
	os.WriteFile(direct, []byte(`{"mcpServers": {}}`), 0o600)
	if res, err := WriteFileSafely(direct, []byte(`{"mcpServers": {"a": {}}}`), 0o600); err != nil || !strings.HasPrefix(res.Backup, filepath.Join(state, "mcpsandbox", "backups")+string(filepath.Separator)) {
		t.Errorf("a file in the work tree: backup at %q (%v), want it under %s", res.Backup, err, filepath.Join(state, "mcpsandbox", "backups"))
	}
	ents, _ := os.ReadDir(repo)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".bak-") {
			t.Errorf("a backup in the work tree: %s", e.Name())
		}
	}
}

// A config reached through a link, its own (~/.cursor/mcp.json -> the dotfiles' cursor/mcp.json)
// or a directory's above it (~/.gemini -> dotfiles/gemini), in a directory that is no git work
// tree (a dotfiles directory used as the workspace), gets its backup in the state directory:
// beside the target it lay in the workspace, where calls read it (atk40 F6). Nothing is left
// beside the link either. Red with mutant init-backup-in-workspace.
func TestBackupOfALinkedConfigStaysOutOfItsTargetsDirectory(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	dots, home := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(dots, "cursor"), 0o755)
	os.MkdirAll(filepath.Join(dots, "gemini"), 0o755)
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	os.WriteFile(filepath.Join(dots, "cursor", "mcp.json"), []byte(`{"mcpServers": {}}`), 0o600)
	os.WriteFile(filepath.Join(dots, "gemini", "settings.json"), []byte(`{"mcpServers": {}}`), 0o600)
	if os.Symlink(filepath.Join(dots, "cursor", "mcp.json"), filepath.Join(home, ".cursor", "mcp.json")) != nil ||
		os.Symlink(filepath.Join(dots, "gemini"), filepath.Join(home, ".gemini")) != nil {
		t.Skip("no symbolic links here")
	}
	for _, p := range []string{filepath.Join(home, ".cursor", "mcp.json"), filepath.Join(home, ".gemini", "settings.json")} {
		res, err := WriteFileSafely(p, []byte(`{"mcpServers": {"a": {}}}`), 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(res.Backup, filepath.Join(state, "mcpsandbox", "backups")+string(filepath.Separator)) {
			t.Errorf("%s: the backup is at %q, want it under %s", p, res.Backup, filepath.Join(state, "mcpsandbox", "backups"))
		}
		if b, _ := os.ReadFile(res.Backup); string(b) != `{"mcpServers": {}}` {
			t.Errorf("%s: the backup holds %q", p, b)
		}
	}
	for _, d := range []string{filepath.Join(dots, "cursor"), filepath.Join(dots, "gemini"), filepath.Join(home, ".cursor")} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".bak-") {
				t.Errorf("a backup in %s: %s", d, e.Name())
			}
		}
	}
}

// Backup names in the state directory are one name for one path: every clean absolute path
// over an alphabet of the characters the name escapes (and of those an escape is made of) gets
// a name of its own. The name made by joining with "%" and dropping ":" gave /p/a%b/mcp.json
// and /p/a/b/mcp.json one base, so pruning one's backups removed the other's (atk33 F6, note).
// Catches init-backup-name-injective.
func TestBackupNamesAreOnePerPath(t *testing.T) {
	dir := t.TempDir()
	if a, b := backupBase("/p/a%b/mcp.json", dir), backupBase("/p/a/b/mcp.json", dir); a == b {
		t.Errorf("/p/a%%b/mcp.json and /p/a/b/mcp.json share the backup base %s", a)
	}
	if got, want := backupBase("/p/.vscode/mcp.json", dir), filepath.Join(dir, "p%.vscode%mcp.json"); got != want {
		t.Errorf("an ordinary path's base is %s, want %s (the names of backups made before stay)", got, want)
	}
	seen := map[string]string{}
	var walk func(path string, n int)
	walk = func(path string, n int) {
		if !strings.HasSuffix(path, "/") {
			base := backupBase(path, dir)
			if other, ok := seen[base]; ok {
				t.Fatalf("%s and %s share the backup base %s", other, path, base)
			}
			seen[base] = path
		}
		if n == 0 {
			return
		}
		for _, c := range "/%@:a25" {
			if c == '/' && strings.HasSuffix(path, "/") {
				continue // a clean path has no "//", and ends in a name
			}
			walk(path+string(c), n-1)
		}
	}
	walk("/", 6)
}
