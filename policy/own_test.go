package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Serve's own files inside the workspace are refused, however the path reaches there (a link
// to the workspace, a file not made yet); outside it, or beside it, they are not.
func TestCheckOwnFiles(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.MkdirAll(filepath.Join(ws, "logs"), 0o755)
	link := filepath.Join(root, "link")
	os.Symlink(ws, link)
	for _, c := range []struct {
		policy, audit, want string
	}{
		{filepath.Join(ws, "p.toml"), filepath.Join(root, "audit.jsonl"), "the policy file"},
		{filepath.Join(root, "p.toml"), filepath.Join(ws, "logs", "audit.jsonl"), "the audit log"},
		{filepath.Join(root, "p.toml"), filepath.Join(link, "new", "audit.jsonl"), "the audit log"},
		{filepath.Join(root, "p.toml"), filepath.Join(root, "ws2", "audit.jsonl"), ""},
		{"", filepath.Join(root, "audit.jsonl"), ""},
	} {
		err := CheckOwnFiles(ws, c.policy, c.audit)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s, %s: %v", c.policy, c.audit, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want+" ") || !strings.Contains(err.Error(), "inside the workspace")):
			t.Errorf("%s, %s: %v, want %s refused", c.policy, c.audit, err, c.want)
		}
	}
}

// The audit log may not lie in a directory sandboxed code reads (read_paths, wrap.read), through
// a link or not yet made; a sibling directory is fine.
func TestCheckAuditNotReadIn(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "state")
	os.MkdirAll(state, 0o755)
	link := filepath.Join(root, "link")
	os.Symlink(root, link)
	for _, c := range []struct {
		dirs  []string
		audit string
		bad   bool
	}{
		{[]string{"/usr/share", link}, filepath.Join(state, "mcpsandbox", "audit.jsonl"), true},
		{[]string{state}, filepath.Join(state, "audit.jsonl"), true},
		{[]string{filepath.Join(root, "data")}, filepath.Join(state, "audit.jsonl"), false},
		{nil, filepath.Join(state, "audit.jsonl"), false},
	} {
		err := CheckAuditNotReadIn(c.dirs, "allowlist.read_paths", c.audit)
		if c.bad != (err != nil) || c.bad && !strings.Contains(err.Error(), "allowlist.read_paths[") {
			t.Errorf("audit %s in %q: %v", c.audit, c.dirs, err)
		}
	}
}

// The refusal of an audit log in a directory sandboxed code reads offers the default ("") only
// when the log is not the default already (trial33 F5: a home given to a wrapped server held the
// default log, and the fix offered that very default).
func TestAuditFixOffersTheDefaultOnlyWhenItHelps(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	err := CheckAuditNotReadIn([]string{home}, "wrap.read", DefaultAuditPath(home))
	if err == nil || strings.Contains(err.Error(), `""`) || !strings.Contains(err.Error(), "it is the default path") {
		t.Errorf("the default log in a read directory: %v", err)
	}
	err = CheckAuditNotReadIn([]string{home}, "wrap.read", filepath.Join(home, "mine.jsonl"))
	if err == nil || !strings.Contains(err.Error(), `"" for the default`) {
		t.Errorf("another log in a read directory: %v", err)
	}
}
