package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// docker.workspace is refused when it is, or resolves to (symlink, ".."), the host's own
// directories or the directory of the engine's socket, naming the rule and the key to fix; an
// ordinary directory is accepted and mounted as it resolves.
func TestWorkspacePathRefused(t *testing.T) {
	root := t.TempDir()
	ok := filepath.Join(root, "ws")
	sockDir := filepath.Join(root, "engine")
	for _, d := range []string{filepath.Join(ok, "a", "b"), sockDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("/etc", filepath.Join(root, "etclink"))
	os.Symlink("/", filepath.Join(root, "rootlink"))
	os.Symlink(ok, filepath.Join(root, "wslink"))
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	t.Setenv("HOME", home)
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(root, "sshlink"))
	const def = "unix:///var/run/docker.sock"
	own := "unix://" + filepath.Join(sockDir, "docker.sock")
	dots := filepath.Join(ok, "a", "b") + strings.Repeat("/..", 20) + "/etc"
	for _, c := range []struct{ conf, host, want string }{
		{"/etc", def, "workspace is the system directory /etc:"},
		{filepath.Join(root, "etclink"), def, "workspace is the system directory /etc (" + filepath.Join(root, "etclink") + " resolves to /etc):"},
		{dots, def, "workspace is the system directory /etc"},
		{filepath.Join(ok, "a", "..", "..", "..", "..", "..", "..", "..", "..", "etc"), def, "workspace is the system directory /etc"},
		{"/", def, "workspace is /:"},
		{filepath.Join(root, "rootlink"), def, "workspace is / (" + filepath.Join(root, "rootlink") + " resolves to /):"},
		{"/var/run", def, "system directory /run"},
		{"/run", def, "workspace is the system directory /run"},
		{"/usr/share", def, "is inside the system directory /usr"},
		{"/etc/ssl", def, "is inside the system directory /etc"},
		{sockDir, own, "workspace is the directory of the Docker engine's socket " + sockDir},
		{root, own, "contains the directory of the Docker engine's socket " + sockDir},
		{"/etc", "tcp://10.0.0.2:2376", "workspace is the system directory /etc:"},
		{"/srv/x/../../etc", "tcp://10.0.0.2:2376", "workspace is the system directory /etc:"},
		// read-only too: the key goes back to the client in the call's answer (trial30 F13c)
		{filepath.Join(home, ".ssh"), def, "is a dot directory of the home " + home},
		{filepath.Join(root, "sshlink"), def, "resolves to " + filepath.Join(home, ".ssh") + ") is a dot directory"},
		{home, def, "is the home directory " + home},
		{filepath.Join(root, "missing"), def, "create it: mkdir -p"},
		{filepath.Join(root, "my ws"), def, "create it: mkdir -p '" + filepath.Join(root, "my ws") + "'"},
	} {
		_, _, err := CheckWorkspace(c.conf, c.host)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("docker.workspace %s (engine %s): %v, want a refusal saying %q", c.conf, c.host, err, c.want)
			continue
		}
		if !strings.Contains(err.Error(), "docker.workspace") {
			t.Errorf("docker.workspace %s: %v does not name the key to fix", c.conf, err)
		}
	}
	for _, c := range []struct{ conf, host, want string }{
		{ok, def, ok}, {filepath.Join(root, "wslink"), def, ok}, {filepath.Join(ok, "a", "..") + "/", own, ok},
		{"/srv/ai/ws", "tcp://10.0.0.2:2376", "/srv/ai/ws"}, {"", def, ""},
	} {
		got, _, err := CheckWorkspace(c.conf, c.host)
		if err != nil || got != c.want {
			t.Errorf("docker.workspace %s (engine %s): %q, %v; want %q accepted", c.conf, c.host, got, err, c.want)
		}
	}
}

// serve refuses to start on such a workspace, before it starts anything, and what it mounts
// is the workspace as it resolved.
func TestNewRefusesSystemWorkspace(t *testing.T) {
	eng, err := engine.NewHost("unix:///var/run/docker.sock", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	link := filepath.Join(t.TempDir(), "etc")
	os.Symlink("/etc", link)
	p := policy.Default(dksec.Name)
	dksec.Of(p).Workspace = link
	if _, err := New(p, Options{Engine: eng}); err == nil || !strings.Contains(err.Error(), "workspace is the system directory /etc") {
		t.Fatalf("New on a workspace resolving to /etc: %v, want a refusal naming the rule", err)
	}
	ws := t.TempDir()
	os.Symlink(ws, filepath.Join(filepath.Dir(link), "ws"))
	dksec.Of(p).Workspace = filepath.Join(filepath.Dir(link), "ws")
	s := newSpec(p)
	if s.workspace, _, err = CheckWorkspace(dksec.Of(p).Workspace, eng.Host); err != nil {
		t.Fatal(err)
	}
	if _, hc := s.build("n", nil, false); hc.Mounts[0].Source != ws {
		t.Errorf("mounted %s, want the resolved %s", hc.Mounts[0].Source, ws)
	}
}
