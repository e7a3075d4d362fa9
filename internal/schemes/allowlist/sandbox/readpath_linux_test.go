package sandbox

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
)

// serve says at its start which read paths another local user could create or replace (attack
// round atk23: one missing under /tmp could be made by anyone, a link to what they chose, and
// serve, as root, bound what it led to for the commands); one the server's user owns is no
// warning.
func TestReadPathRiskWarnedAtStart(t *testing.T) {
	shared := t.TempDir()
	os.Chmod(shared, 0o777|os.ModeSticky)
	mine := filepath.Join(shared, "mine")
	os.Mkdir(mine, 0o755)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		warn bool
	}{{filepath.Join(shared, "missing"), true}, {mine, false}} {
		p := wcPolicy(t)
		alsec.Of(p).ReadPaths = []string{c.path}
		var log bytes.Buffer
		e, err := New(p, Options{HelperPath: exe, Logger: slog.New(slog.NewTextHandler(&log, nil)), DeferProbe: true})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		got := strings.Contains(log.String(), "allowlist.read_paths[0]: ")
		if got != c.warn {
			t.Errorf("read path %s: warned %t, want %t; the log:\n%s", c.path, got, c.warn, log.String())
		}
		if c.warn && !strings.Contains(log.String(), "writable by every local user") {
			t.Errorf("the warning does not say who could create %s:\n%s", c.path, log.String())
		}
	}
}
