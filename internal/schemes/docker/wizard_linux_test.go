package docker

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
)

// A writable workspace the wizard creates under root is handed to nobody, whom containers run as
// in a workspace root owns: else init's proof (a file created there) fails on the directory init
// itself just made. A read-only one stays root's.
func TestWizardCreatesAWorkspaceContainersCanWrite(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: the hand-over is for root only")
	}
	for _, writable := range []bool{true, false} {
		ws := filepath.Join(t.TempDir(), "ws")
		a := &generate.Answers{Scheme: dksec.Name, Wizards: map[string]*generate.Wizard{dksec.Name: wizard}}
		Own(a).Workspace, Own(a).WorkspaceWritable = ws, writable
		var out strings.Builder
		pr := scheme.Prompt{Out: &out, Interactive: true, Confirm: func(string, bool) (bool, error) { return true, nil }}
		if err := workspaceExists(a, pr); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(ws)
		if err != nil {
			t.Fatal(err)
		}
		uid := st.Sys().(*syscall.Stat_t).Uid
		if want := map[bool]uint32{true: 65534, false: 0}[writable]; uid != want {
			t.Errorf("writable %v: the created workspace is uid %d's, want %d's", writable, uid, want)
		}
	}
}
