package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// An engine reached over TCP at this machine's loopback runs here, as one on the unix socket
// does: it resolves a bind source on this host, following its links. Only an engine at another
// address is remote (attack round atk32, F6: tcp://127.0.0.1 was remote, so a workspace linked
// to ~/.ssh was judged as written and mounted, and a writable one had no transactional layer).
func TestLoopbackEngineIsLocal(t *testing.T) {
	for host, remote := range map[string]bool{
		"tcp://127.0.0.1:2375":             false,
		"tcp://localhost:2375":             false,
		"tcp://[::1]:2375":                 false,
		"tcp://127.0.0.2:2376":             false,
		"https://LOCALHOST.:2376":          false,
		"tcp://0.0.0.0:2375":               false,
		"unix:///var/run/docker.sock":      false,
		"npipe:////./pipe/docker_engine":   false,
		"tcp://10.0.0.2:2376":              true,
		"tcp://192.168.1.20:2375":          true,
		"tcp://docker.example.com:2376":    true,
		"tcp://localhost.example.com:2375": true,
		"tcp://127.0.0.1.nip.io:2375":      true,
		"tcp://[2001:db8::1]:2376":         true,
	} {
		if got := remoteEngine(host); got != remote {
			t.Errorf("remoteEngine(%s) = %v, want %v", host, got, remote)
		}
	}

	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	t.Setenv("HOME", home)
	link := filepath.Join(t.TempDir(), "sshlink")
	if err := os.Symlink(filepath.Join(home, ".ssh"), link); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"tcp://127.0.0.1:2375", "tcp://localhost:2375", "tcp://[::1]:2375"} {
		_, note, err := CheckWorkspace(link, h)
		if want := "resolves to " + filepath.Join(home, ".ssh") + ") is a dot directory"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("docker.workspace %s with the engine at %s: %v (note %q), want a refusal saying %q", link, h, err, note, want)
		}
		e := &Executor{eng: &engine.Client{Host: h}}
		if gap := e.layerGap(); wslayer.Supported && gap != "" {
			t.Errorf("engine at %s: a writable workspace has no layer: %s", h, gap)
		}
	}
	// an engine on another machine: the path names a directory there, checked as written
	const far = "tcp://10.0.0.2:2376"
	if ws, note, err := CheckWorkspace(link, far); err != nil || ws != link || !strings.Contains(note, "checked as written") {
		t.Errorf("docker.workspace %s with the engine at %s: %q, %q, %v; want it accepted as written, with a note", link, far, ws, note, err)
	}
	if gap := (&Executor{eng: &engine.Client{Host: far}}).layerGap(); !strings.Contains(gap, "another machine") {
		t.Errorf("engine at %s: layer gap %q, want it said the engine is on another machine", far, gap)
	}
	// a loopback port forwarded to another machine: the workspace must exist here, and the error says why
	if _, _, err := CheckWorkspace("/srv/nowhere-a32/ws", "tcp://127.0.0.1:2375"); err == nil || !strings.Contains(err.Error(), "on this machine's loopback") {
		t.Errorf("a missing workspace with a loopback engine: %v", err)
	}
}
