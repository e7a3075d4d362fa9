//go:build linux

package wsfiles

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// A root serve's file tools act as its commands' user (attack round atk24c, F7: read_file and
// list_files returned a root-only file and directory, and write_file wrote into a root-owned
// directory and replaced a root-owned file, all of which the commands got EACCES for). What that
// user may do still works, and serve's own thread keeps its credentials.
func TestFileToolsActAsTheCommandsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("acting as another user needs root")
	}
	f, ws, _ := newFS(t)
	os.Chmod(filepath.Dir(filepath.Dir(ws)), 0o755) // the test's directories, for uid 65534 to reach the workspace
	os.Chmod(filepath.Dir(ws), 0o755)
	os.WriteFile(filepath.Join(ws, "secret"), []byte("root only\n"), 0o600)
	os.Mkdir(filepath.Join(ws, "private"), 0o700)
	os.WriteFile(filepath.Join(ws, "private", "f"), []byte("x"), 0o644)
	os.Mkdir(filepath.Join(ws, "rootdir"), 0o755)
	os.WriteFile(filepath.Join(ws, "rootfile"), []byte("keep\n"), 0o644)
	os.Mkdir(filepath.Join(ws, "mine"), 0o755)
	os.Chown(filepath.Join(ws, "mine"), 65534, 65534)
	os.WriteFile(filepath.Join(ws, "open"), []byte("all may read\n"), 0o644)
	// The control: as serve (root), the file tools reach all of it.
	if _, _, err := f.ReadFile(bg, executor.Call{}, "secret", 1<<20); err != nil {
		t.Fatalf("the control: root's file tools could not read a root-only file: %v", err)
	}
	f.As = &User{UID: 65534, GID: 65534}
	if _, _, err := f.ReadFile(bg, executor.Call{}, "secret", 1<<20); rule(err) != "test.workspace" {
		t.Errorf("read_file of a root-only 0600 file as uid 65534: %v (want refused)", err)
	}
	if _, _, err := f.ReadFile(bg, executor.Call{}, "private/f", 1<<20); rule(err) != "test.workspace" {
		t.Errorf("read_file through a root-only 0700 directory as uid 65534: %v (want refused)", err)
	}
	if _, _, err := f.ListFiles(bg, executor.Call{}, "private"); rule(err) != "test.workspace" {
		t.Errorf("list_files of a root-only 0700 directory as uid 65534: %v (want refused)", err)
	}
	if _, err := f.WriteFile(bg, executor.Call{}, "rootdir/new", []byte("x")); rule(err) != "test.workspace" {
		t.Errorf("write_file into a root-owned 0755 directory as uid 65534: %v (want refused)", err)
	}
	if _, err := f.WriteFile(bg, executor.Call{}, "rootfile", []byte("replaced")); rule(err) != "test.workspace" {
		t.Errorf("write_file over a root-owned 0644 file as uid 65534: %v (want refused)", err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "rootfile")); string(b) != "keep\n" {
		t.Errorf("the root-owned file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "rootdir", "new")); err == nil {
		t.Error("a file was made in the root-owned directory")
	}
	// What the user may do.
	if data, _, err := f.ReadFile(bg, executor.Call{}, "open", 1<<20); err != nil || string(data) != "all may read\n" {
		t.Errorf("read_file of a world-readable file as uid 65534: %q %v", data, err)
	}
	if _, _, err := f.ListFiles(bg, executor.Call{}, "."); err != nil {
		t.Errorf("list_files of the workspace as uid 65534: %v", err)
	}
	if _, err := f.WriteFile(bg, executor.Call{}, "mine/new", []byte("ok")); err != nil {
		t.Errorf("write_file into the user's own directory: %v", err)
	}
	// serve's own credentials are untouched: as root again, it reads what only root may.
	f.As = nil
	if _, _, err := f.ReadFile(bg, executor.Call{}, "secret", 1<<20); err != nil {
		t.Errorf("after acting as uid 65534, serve's file tools could no longer read as root: %v", err)
	}
	if os.Getuid() != 0 || os.Geteuid() != 0 {
		t.Errorf("serve's ids changed: uid %d euid %d", os.Getuid(), os.Geteuid())
	}
}
