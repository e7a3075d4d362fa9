package allowlist

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Under root, commands run as nobody: init says so when the workspace it is given is not
// nobody's to write (a directory root owns), with the fix, and is silent for one nobody owns.
func TestPrepareNotesAWorkspaceNobodyCannotWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: commands run as nobody only under root")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	p := policy.Default(alsec.Name)
	alsec.Of(p).Workspace = ws
	var log bytes.Buffer
	if _, err := (&Answers{}).Prepare(p, &log); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "not theirs to write") || !strings.Contains(log.String(), "chown -R 65534:65534 "+ws) {
		t.Errorf("a root-owned workspace: init says %q, want a note with the fix", log.String())
	}
	os.Chown(ws, 65534, 65534)
	log.Reset()
	if _, err := (&Answers{}).Prepare(p, &log); err != nil || log.Len() != 0 {
		t.Errorf("a workspace nobody owns: %v, %q, want silence", err, log.String())
	}
}
