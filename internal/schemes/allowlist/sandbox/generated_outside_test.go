//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22 item 6: the names split and csplit generate land in the prefix's directory, which is
// resolved through symlinks. A prefix through a workspace symlink that points outside (absolute
// or relative, directly or one level down) is refused by allowlist.workspace, naming the
// argument as given and nothing that lies outside. Catches the split-prefix-outside mutant.
func TestGeneratedNamesOutsideRefused(t *testing.T) {
	e, ws, out := testExec(t, nil)
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("a\nb\n"), 0o644)
	os.Mkdir(filepath.Join(out, "secret-dir-9c1e"), 0o755)
	os.Symlink(filepath.Join(out, "secret-dir-9c1e"), filepath.Join(ws, "dir")) // absolute
	os.Symlink("../out/secret-dir-9c1e", filepath.Join(ws, "rel"))              // relative
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	os.Symlink(filepath.Join(out, "secret-dir-9c1e"), filepath.Join(ws, "sub", "deep"))
	os.Symlink(out, filepath.Join(ws, "top")) // a symlinked dir whose target has subdirectories
	os.Mkdir(filepath.Join(ws, "inside"), 0o755)
	os.Symlink("inside", filepath.Join(ws, "ok")) // a symlink that stays inside

	cases := []struct {
		prog string
		args string
		want string // the exact refusal
	}{
		{"split", "notes.txt dir/part-", `refused by rule allowlist.workspace: argument 2 "dir/part-" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"split", "-l1 notes.txt rel/x", `refused by rule allowlist.workspace: argument 3 "rel/x" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"split", "-a1 --additional-suffix=.txt notes.txt sub/deep/p", `refused by rule allowlist.workspace: argument 4 "sub/deep/p" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"split", "notes.txt dir/", `refused by rule allowlist.workspace: argument 2 "dir/" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"split", "notes.txt top/secret-dir-9c1e/p", `refused by rule allowlist.workspace: argument 2 "top/secret-dir-9c1e/p" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"split", "notes.txt ok/../dir/p", `refused by rule allowlist.workspace: argument 2 "ok/../dir/p" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"csplit", "-f dir/part notes.txt 1", `refused by rule allowlist.workspace: argument 2 "dir/part" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"csplit", "-frel/part notes.txt 1", `refused by rule allowlist.workspace: argument 1 "rel/part" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"csplit", "--prefix=sub/deep/p -b %02d.txt notes.txt 1", `refused by rule allowlist.workspace: argument 1 "sub/deep/p" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
		{"csplit", "--pre dir/p notes.txt 1", `refused by rule allowlist.workspace: argument 2 "dir/p" leads outside the workspace (paths must stay inside the workspace; nothing outside it is named here)`},
	}
	for _, c := range cases {
		_, err := e.checkArgs(e.cmd(c.prog), strings.Fields(c.args))
		if err == nil {
			t.Errorf("%s %s: allowed; its generated names land outside the workspace", c.prog, c.args)
			continue
		}
		if got := err.Error(); got != c.want {
			t.Errorf("%s %s:\n got  %s\n want %s", c.prog, c.args, got, c.want)
		}
		if msg := err.Error(); strings.Contains(msg, out) || strings.Contains(msg, "secret-dir") && !strings.Contains(c.args, "secret-dir") {
			t.Errorf("%s %s: the refusal names what lies outside: %s", c.prog, c.args, msg)
		}
	}
	// The control: the same shapes through a symlink that stays inside are allowed.
	for _, c := range [][]string{
		{"split", "notes.txt", "ok/part-"},
		{"split", "notes.txt", "inside/p"},
		{"csplit", "-f", "ok/part", "notes.txt", "1"},
		{"csplit", "--prefix=inside/p", "notes.txt", "1"},
	} {
		if _, err := e.checkArgs(e.cmd(c[0]), c[1:]); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
}
