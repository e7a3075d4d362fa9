package sandbox

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/mount"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// A file system mounted below a read-only workspace (an NFS share, a USB disk, a tmpfs for build
// output) stays out of the program's reach: Docker before 25 made only the top of its recursive
// bind read-only, and a call wrote through the submount onto the host, unchecked (atk39 F6).
func TestReadOnlyWorkspaceSubmount(t *testing.T) {
	eng := needEngine(t)
	if os.Geteuid() != 0 {
		testenv.Skip(t, "mounting a tmpfs below the workspace needs root")
		return
	}
	ws := t.TempDir()
	os.Chmod(ws, 0o777)
	data := filepath.Join(ws, "data")
	if err := os.Mkdir(data, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", data, "tmpfs", 0, "size=1m,mode=0777"); err != nil {
		testenv.Skip(t, "mount a tmpfs at %s: %v", data, err)
		return
	}
	t.Cleanup(func() { unix.Unmount(data, unix.MNT_DETACH) })
	modes(t, eng, func(p *policy.Policy) { dksec.Of(p).Workspace = ws }, func(t *testing.T, e *Executor) {
		r := mustCall(t, e, ToolShell, map[string]any{"script": `echo x >/workspace/data/planted && echo "wrote below"; grep ' /workspace' /proc/self/mountinfo; true`})
		if _, err := os.Stat(filepath.Join(data, "planted")); err == nil || strings.Contains(r.Stdout, "wrote below") {
			os.Remove(filepath.Join(data, "planted"))
			t.Fatalf("a call wrote below the read-only workspace, onto the host's tmpfs: %+v", r)
		}
		for _, l := range e.Layers() {
			if l.Name == LayerWorkspace && (!l.Active || !strings.Contains(l.Detail, "mounted below it")) {
				t.Errorf("the workspace layer: %+v", l)
			}
		}
	})
}

// roBind asks for recursive read-only where the engine offers it (API 1.44+), else binds
// non-recursively; a start the engine fails for want of recursive read-only is retried without.
func TestReadOnlyBindOptions(t *testing.T) {
	if o := (spec{rro: true}).roBind(); o == nil || !o.ReadOnlyForceRecursive || o.NonRecursive {
		t.Errorf("API 1.44+: %+v", o)
	}
	if o := (spec{}).roBind(); o == nil || !o.NonRecursive {
		t.Errorf("an older engine: %+v", o)
	}
	ro := (spec{workspace: "/w"}).workspaceMount(nil)
	if ro.BindOptions == nil || !ro.ReadOnly {
		t.Errorf("a read-only workspace: %+v", ro)
	}
	e := &Executor{log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if l := e.workspaceLayer([]mount.Mount{{Type: mount.TypeBind, Source: "/w", Target: workspaceDir, ReadOnly: true}}); l.Active {
		t.Errorf("a read-only bind read-only at its top only is in force: %+v", l)
	}
	if l := e.workspaceLayer([]mount.Mount{ro}); !l.Active {
		t.Errorf("%+v", l)
	}
	b := &box{rro: true}
	if e.rroFailed(b, errors.New("something else")) || !e.rroFailed(b, errors.New("failed to make bind mount recursively read-only")) || e.rroOff.Load() == nil {
		t.Error("a start the engine failed for recursive read-only is not retried non-recursively")
	}
}
