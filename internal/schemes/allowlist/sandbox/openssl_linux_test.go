package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
)

// Every call reads OpenSSL's configuration file, as it reads the system's libraries: node linked
// against OpenSSL refuses to run any JavaScript without it (trial37 F2), and the user's only way
// was read_paths, which explain rightly counts as a gap. Only the file, where its names lead: a
// sibling in its directory, the private-key directory, or a configuration name that leads into
// it stay unread. The tree is a stand-in for /etc/ssl and /usr/lib/ssl, outside /tmp (a call's
// /tmp is its own) and outside every directory calls may read. Catches the mutants
// allowlist-openssl-conf-unread and allowlist-openssl-conf-private.
func TestOpenSSLConfigReadOnlyThatFile(t *testing.T) {
	root, err := os.MkdirTemp("/var/tmp", "mcps-openssl-test-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	etc := filepath.Join(root, "etc", "ssl")
	private := filepath.Join(etc, "private")
	lib := filepath.Join(root, "usr", "lib", "ssl")
	for _, d := range []string{private, lib} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Chmod(p, 0o755) })
	files := map[string]string{
		"etc/ssl/openssl.cnf":   "openssl_conf = default\n",
		"etc/ssl/dist.cnf":      "dist config\n",
		"etc/ssl/private/key":   "PRIVATE KEY\n",
		"etc/ssl/other.conf":    "not a config OpenSSL reads\n",
		"etc/ssl/private/other": "another private file\n",
	}
	for rel, body := range files {
		if err := os.WriteFile(filepath.Join(root, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// OPENSSLDIR's name for the file is a link, as on Debian (there to /etc/ssl/openssl.cnf;
	// here to a file of its own, to tell the two apart); a third name leads into private/.
	os.Symlink(filepath.Join(etc, "dist.cnf"), filepath.Join(lib, "openssl.cnf"))
	os.Symlink(filepath.Join(private, "key"), filepath.Join(lib, "key.cnf"))
	defer func(c []string, p string) { opensslConfigs, opensslPrivate = c, p }(opensslConfigs, opensslPrivate)
	opensslConfigs = []string{filepath.Join(etc, "openssl.cnf"), filepath.Join(lib, "openssl.cnf"), filepath.Join(lib, "key.cnf")}
	opensslPrivate = private

	p := wcPolicy(t)
	for i := range alsec.Of(p).Commands {
		if alsec.Of(p).Commands[i].Name == "cat" {
			alsec.Of(p).Commands[i].AllowOutsidePaths = true
		}
	}
	exe, _ := os.Executable()
	e := readyExecutor(t, p, exe)
	for _, c := range []struct {
		path string
		read bool
	}{
		{filepath.Join(etc, "openssl.cnf"), true},
		{filepath.Join(lib, "openssl.cnf"), true}, // through its link
		{filepath.Join(etc, "dist.cnf"), true},    // what the link leads to
		{filepath.Join(etc, "other.conf"), false},
		{filepath.Join(private, "key"), false},
		{filepath.Join(lib, "key.cnf"), false}, // a configuration name leading into private/
		{filepath.Join(private, "other"), false},
	} {
		args, _ := json.Marshal(map[string]any{"command": "cat", "args": []string{c.path}})
		res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 20 * time.Second, MaxOutput: 64 << 10})
		if err != nil {
			t.Fatalf("cat %s: %v", c.path, err)
		}
		got := res.ExitCode == 0 && res.Stdout != ""
		if got != c.read {
			t.Errorf("cat %s: read %t, want %t (exit %d, stdout %q, stderr %s)", c.path, got, c.read, res.ExitCode, res.Stdout, strings.TrimSpace(res.Stderr))
		}
		if !c.read && !strings.Contains(res.Stderr, "Permission denied") {
			t.Errorf("cat %s: refused, but not by Landlock: %s", c.path, res.Stderr)
		}
	}
}
