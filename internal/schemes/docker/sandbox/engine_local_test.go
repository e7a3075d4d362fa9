package sandbox

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// engineHosts are engine addresses and whether each is another machine's. A name that does not
// resolve (.invalid never does) is another machine's: the engine client cannot reach it here.
var engineHosts = map[string]bool{
	"tcp://127.0.0.1:2375":           false,
	"tcp://localhost:2375":           false,
	"tcp://[::1]:2375":               false,
	"tcp://127.0.0.2:2376":           false,
	"https://LOCALHOST.:2376":        false,
	"tcp://0.0.0.0:2375":             false,
	"unix:///var/run/docker.sock":    false,
	"npipe:////./pipe/docker_engine": false,
	"tcp://10.0.0.2:2376":            true,
	"tcp://192.168.1.20:2375":        true,
	"tcp://docker.invalid:2376":      true,
	"tcp://localhost.invalid:2375":   true,
	"tcp://127.0.0.1.invalid:2375":   true,
	"tcp://[2001:db8::1]:2376":       true,
}

// An engine reached over TCP at this machine's loopback runs here, as one on the unix socket
// does: it resolves a bind source on this host, following its links. Only an engine at another
// address is remote (attack round atk32, F6: tcp://127.0.0.1 was remote, so a workspace linked
// to ~/.ssh was judged as written and mounted, and a writable one had no transactional layer).
func TestLoopbackEngineIsLocal(t *testing.T) {
	checkEngines(t, engineHosts)
	link := sshLink(t)
	loopback := []string{"tcp://127.0.0.1:2375", "tcp://localhost:2375", "tcp://[::1]:2375"}
	wantSSHLinkRefused(t, link, loopback...)
	for _, h := range loopback {
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
	if _, _, err := CheckWorkspace("/srv/nowhere-a32/ws", "tcp://127.0.0.1:2375"); err == nil || !strings.Contains(err.Error(), "is on this machine (its loopback") {
		t.Errorf("a missing workspace with a loopback engine: %v", err)
	}
}

// An engine reached over TCP at this machine's own host name or at one of its interfaces'
// addresses (a dockerd -H tcp://0.0.0.0:2376 reached as tcp://$(hostname):2376) runs here too:
// the workspace is judged as it resolves, a link to ~/.ssh refused (atk33 F1: it was taken
// for a remote engine, and the home's .ssh mounted and read). Catches docker-engine-own-address.
func TestOwnNameAndAddressEngineIsLocal(t *testing.T) {
	own := map[string]bool{}
	for h, remote := range engineHosts {
		own[h] = remote
	}
	name, err := os.Hostname()
	if err != nil || name == "" {
		t.Skipf("no host name: %v", err)
	}
	own["tcp://"+name+":2376"] = false
	own["tcp://"+strings.ToUpper(name)+".:2376"] = false
	as, _ := net.InterfaceAddrs()
	var addr string
	for _, a := range as {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok || ip.Unmap().IsLoopback() {
			continue
		}
		hp := "tcp://" + netip.AddrPortFrom(ip.Unmap(), 2376).String()
		own[hp] = false
		if addr == "" {
			addr = hp
		}
	}
	if addr == "" {
		t.Skip("this machine has no address but loopback")
	}
	checkEngines(t, own)
	wantSSHLinkRefused(t, sshLink(t), "tcp://"+name+":2376", addr)
}

// checkEngines wants remoteEngine to answer as table says for each host.
func checkEngines(t *testing.T, table map[string]bool) {
	t.Helper()
	for host, remote := range table {
		if got := remoteEngine(host); got != remote {
			t.Errorf("remoteEngine(%s) = %v, want %v", host, got, remote)
		}
	}
}

// sshLink is a link, outside a fresh HOME, to that HOME's .ssh.
func sshLink(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh"), 0o700)
	t.Setenv("HOME", home)
	link := filepath.Join(t.TempDir(), "sshlink")
	if err := os.Symlink(filepath.Join(home, ".ssh"), link); err != nil {
		t.Fatal(err)
	}
	return link
}

// wantSSHLinkRefused wants docker.workspace link (sshLink's) refused with the engine at each
// host, judged as it resolves: a dot directory of the home.
func wantSSHLinkRefused(t *testing.T, link string, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		_, note, err := CheckWorkspace(link, h)
		if want := "resolves to " + filepath.Join(os.Getenv("HOME"), ".ssh") + ") is a dot directory"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("docker.workspace %s with the engine at %s: %v (note %q), want a refusal saying %q", link, h, err, note, want)
		}
	}
}
