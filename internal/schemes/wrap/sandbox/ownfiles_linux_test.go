package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The wrapped server writes in [wrap].write: an audit log or a policy file there (even through a
// link) is refused before anything runs, as serve refuses them in its workspace; outside, the
// same policy gets past that check. Catches wrap-own-files.
func TestWrapRefusesOwnFilesInWriteDirs(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	base := t.TempDir()
	out := filepath.Join(base, "out")
	os.Mkdir(out, 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(out, link)
	run := func(audit, file string) error {
		p := policy.Default(wrapsec.Name)
		wrapsec.Of(p).Write = []string{link}
		p.Audit.Path = audit
		p.File = file
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // past the checks nothing should run long
		return Run(ctx, p, Options{Command: []string{"/bin/true"}, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	}
	for _, c := range []struct{ audit, file, what string }{
		{filepath.Join(out, "audit.jsonl"), "", "the audit log"},
		{filepath.Join(base, "audit.jsonl"), writePolicy(t, out), "the policy file"},
	} {
		err := run(c.audit, c.file)
		if err == nil || !strings.Contains(err.Error(), c.what) || !strings.Contains(err.Error(), "wrap.write") {
			t.Errorf("%s inside wrap.write: Run = %v, want a refusal naming it and wrap.write", c.what, err)
		}
	}
	if err := run(filepath.Join(base, "audit.jsonl"), writePolicy(t, base)); err != nil && strings.Contains(err.Error(), "wrap.write directory") {
		t.Errorf("own files outside wrap.write refused: %v", err)
	}
}

// wrap refuses an audit log inside a wrap.read directory: the wrapped server (under serve's
// own uid when serve is not root) could read every call's record.
func TestWrapRefusesAuditLogInReadDirs(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	base := t.TempDir()
	p := policy.Default(wrapsec.Name)
	wrapsec.Of(p).Read = []string{base}
	p.Audit.Path = filepath.Join(base, "logs", "audit.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	err := Run(ctx, p, Options{Command: []string{"/bin/true"}, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
	if err == nil || !strings.Contains(err.Error(), "the audit log") || !strings.Contains(err.Error(), "wrap.read[0]") {
		t.Errorf("audit log inside wrap.read: Run = %v, want a refusal naming wrap.read", err)
	}
}

func writePolicy(t *testing.T, dir string) string {
	t.Helper()
	f := filepath.Join(dir, "policy.toml")
	if err := os.WriteFile(f, []byte("version = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}
