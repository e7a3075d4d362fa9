package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
)

// A serve that is not root, in the docker group, with a writable workspace: once it has exited,
// nothing it made for its calls is left under /var/tmp/mcpsandbox-layers-UID. The engine (root)
// mounts each call's overlay, so the kernel makes its work/work for root (mode 0) and, after a
// call that deletes a file, keeps a whiteout in it: the user could not remove that, and no serve
// did (trial37 F4). The layer directory a killed serve left with root's files in it is removed
// by the next serve too. The test runs as root (as CI does) and starts serve as a uid of its own
// with the engine socket's group. Red with mutant docker-layer-purge-off.
func TestDockerNonRootLayersLeaveNothing(t *testing.T) {
	eng := needDocker(t)
	if os.Geteuid() != 0 {
		t.Skip("runs serve as another uid in the docker group: this test runs as root (as CI does)")
	}
	sock, ok := strings.CutPrefix(eng.Host, "unix://")
	if !ok {
		t.Skipf("the engine is not reached through a unix socket here (%s)", eng.Host)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(sock, &st); err != nil {
		t.Fatal(err)
	}
	const uid = 61037 // no user of this machine's
	layers := "/var/tmp/mcpsandbox-layers-" + strconv.Itoa(uid)
	os.RemoveAll(layers)
	t.Cleanup(func() { os.RemoveAll(layers) })

	root, err := os.MkdirTemp("/var/tmp", "mcpsandbox-e2e-nonroot-docker-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	ws := mkdir(t, root, "ws", 0o755)
	home := mkdir(t, root, "home", 0o700)
	write(t, filepath.Join(ws, "del.txt"), "a\n", 0o644)
	for _, p := range []string{ws, home, filepath.Join(ws, "del.txt")} {
		os.Chown(p, uid, uid)
	}
	src := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = ws, true
		p.Audit.Path = filepath.Join(home, "audit.jsonl")
	})
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(root, "docker.toml")
	write(t, pol, string(b), 0o644)

	// what a serve killed after such a call leaves: its layer, with root's work/work and whiteout
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(layers, "call-"+strconv.Itoa(dead.Process.Pid)+"-1")
	for _, d := range []string{layers, left, filepath.Join(left, "upper"), filepath.Join(left, "work")} {
		mkdir(t, filepath.Dir(d), filepath.Base(d), 0o700)
		os.Chown(d, uid, uid)
	}
	ww := mkdir(t, filepath.Join(left, "work"), "work", 0o700)
	if err := syscall.Mknod(filepath.Join(ww, "#3dc84"), syscall.S_IFCHR, 0); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ww, 0)

	cmd := exec.Command(binPath, "serve", "--policy", pol, "--log-level", "debug")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config", "DOCKER_HOST="+eng.Host)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{st.Gid}}}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-docker", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	res, r, err := callDocker(ctx, cs, sd.ToolShell, map[string]any{"script": "rm del.txt && echo gone"})
	if err != nil || res.IsError || !strings.Contains(r.Stdout, "gone") {
		cs.Close()
		t.Fatalf("the call: %v %s", err, resultText(res))
	}
	if _, err := os.Lstat(filepath.Join(ws, "del.txt")); !os.IsNotExist(err) {
		t.Errorf("del.txt is still in the workspace after the call's commit: %v", err)
	}
	cs.Close() // serve exits, its purges done
	cmd.Wait()
	ents, err := os.ReadDir(layers)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 0 {
		t.Errorf("left in %s after serve exited: %v (a layer's root-owned files stayed)", layers, names)
	}
}
