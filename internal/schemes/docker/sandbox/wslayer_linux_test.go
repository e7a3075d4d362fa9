package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// userWorkspace is a workspace owned by a non-root user (uid:gid 1000:1000), as a user's
// project folder is, holding a.txt (0644) and c.txt.
func userWorkspace(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to give the workspace to another user (the test runs as root in CI)")
	}
	ws := filepath.Join(t.TempDir(), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"a.txt": "old\n", "c.txt": "doomed\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{ws, filepath.Join(ws, "a.txt"), filepath.Join(ws, "c.txt")} {
		if err := os.Chown(p, 1000, 1000); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func writable(ws string) func(*policy.Policy) {
	return func(p *policy.Policy) { dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = ws, true }
}

// volumesOf lists the engine's volumes labelled with the executor's instance.
func volumesOf(t *testing.T, eng *engine.Client, inst string) []string {
	t.Helper()
	vs, err := eng.API.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelInstance+"="+inst))})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range vs.Volumes {
		names = append(names, v.Name)
	}
	return names
}

func ownerOf(t *testing.T, p string) (int, int) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return int(st.Uid), int(st.Gid)
}

// TestWorkspaceLayerUserOwned: with a writable workspace that belongs to a user, the container
// runs as that user and can write the mount (as nobody it got EACCES); its writes reach the host
// after the call, owned by the workspace's owner, a deletion included; a second call sees the
// first's changes; the mount is the layer's overlay volume, and no volume outlives the executor.
func TestWorkspaceLayerUserOwned(t *testing.T) {
	eng := needEngine(t)
	for _, pool := range []int{0, 2} {
		ws := userWorkspace(t)
		var mu sync.Mutex
		var uppers []string // every layer the executor made, to check none outlives it
		e := newExecOpts(t, testPolicy(writable(ws), func(p *policy.Policy) { dksec.Of(p).Pool = pool }), Options{Engine: eng, TestOnlyLayerOptions: func(o string) string {
			mu.Lock()
			defer mu.Unlock()
			up, _, _ := strings.Cut(o[strings.Index(o, "upperdir=")+len("upperdir="):], ",")
			uppers = append(uppers, up)
			return o
		}})
		r := mustCall(t, e, ToolShell, map[string]any{"script": "id -u; grep ' /workspace ' /proc/self/mountinfo | grep -q ' - overlay ' && echo layer; " +
			"echo new > b.txt && echo more >> a.txt && rm c.txt && mkdir -p d/e && echo deep > d/e/f.txt && echo wrote"})
		if r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "1000\n") || !strings.HasSuffix(r.Stdout, "wrote\n") {
			t.Fatalf("pool=%d: the container could not write a user's workspace: %+v", pool, r)
		}
		if !strings.Contains(r.Stdout, "\nlayer\n") {
			t.Errorf("pool=%d: /workspace is not the overlay layer: %q", pool, r.Stdout)
		}
		for name, want := range map[string]string{"b.txt": "new\n", "a.txt": "old\nmore\n", "d/e/f.txt": "deep\n"} {
			b, err := os.ReadFile(filepath.Join(ws, name))
			if err != nil || string(b) != want {
				t.Errorf("pool=%d: %s on the host = %q, %v; want %q", pool, name, b, err, want)
				continue
			}
			if uid, gid := ownerOf(t, filepath.Join(ws, name)); uid != 1000 || gid != 1000 {
				t.Errorf("pool=%d: %s is owned by %d:%d, not the workspace's owner 1000:1000", pool, name, uid, gid)
			}
		}
		if _, err := os.Lstat(filepath.Join(ws, "c.txt")); !os.IsNotExist(err) {
			t.Errorf("pool=%d: c.txt, removed by the call, is still on the host (%v)", pool, err)
		}
		r = mustCall(t, e, ToolShell, map[string]any{"script": "cat b.txt d/e/f.txt; ls"})
		if r.ExitCode != 0 || r.Stdout != "new\ndeep\na.txt\nb.txt\nd\n" {
			t.Errorf("pool=%d: a second call does not see the first's changes: %+v", pool, r)
		}
		if r.Workspace == nil || r.Workspace.Committed != 0 || r.Workspace.Discarded != "" {
			t.Errorf("pool=%d: a call that wrote nothing reports %+v", pool, r.Workspace)
		}
		inst := e.Instance()
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if vs := volumesOf(t, eng, inst); len(vs) > 0 {
			t.Errorf("pool=%d: volumes outlived the executor: %v", pool, vs)
		}
		mu.Lock()
		if len(uppers) < 2 {
			t.Errorf("pool=%d: %d layers made for two calls", pool, len(uppers))
		}
		for _, up := range uppers {
			if _, err := os.Lstat(filepath.Dir(up)); !os.IsNotExist(err) {
				t.Errorf("pool=%d: the layer %s outlived the executor (%v)", pool, filepath.Dir(up), err)
			}
		}
		mu.Unlock()
	}
}

// TestWorkspaceLayerFallback: an engine that cannot mount the layer (here: options naming a
// lower directory that does not exist) gets the plain bind mount, the call still works, and the
// layers say the workspace is written unchecked, and why.
func TestWorkspaceLayerFallback(t *testing.T) {
	eng := needEngine(t)
	ws := userWorkspace(t)
	e := newExecOpts(t, testPolicy(writable(ws)), Options{Engine: eng, TestOnlyLayerOptions: func(o string) string {
		return "lowerdir=/nonexistent-mcpsandbox-lower," + o[strings.Index(o, "upperdir="):]
	}})
	r := mustCall(t, e, ToolShell, map[string]any{"script": "echo direct > b.txt && echo ok"})
	if r.ExitCode != 0 || r.Stdout != "ok\n" || r.Workspace != nil {
		t.Fatalf("the call on the fallback: %+v", r)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "b.txt")); err != nil || string(b) != "direct\n" {
		t.Errorf("b.txt on the host: %q, %v", b, err)
	}
	for _, l := range e.Layers() {
		if l.Name == LayerWorkspace && (l.Active || !strings.Contains(l.Detail, "could not mount the per-call overlay layer")) {
			t.Errorf("the workspace layer does not name the gap: %+v", l)
		}
	}
}

// TestWorkspaceLayerTransientFailure: once the engine has mounted a layer, a later failure to
// mount one (a layer gone under it, a loaded host) never turns the layer off for the rest of
// serve's life: the box is retried with a fresh layer, and the call is still transactional.
func TestWorkspaceLayerTransientFailure(t *testing.T) {
	eng := needEngine(t)
	ws := userWorkspace(t)
	var breakNext atomic.Bool
	e := newExecOpts(t, testPolicy(writable(ws)), Options{Engine: eng, TestOnlyLayerOptions: func(o string) string {
		if breakNext.CompareAndSwap(true, false) {
			return "lowerdir=/nonexistent-mcpsandbox-lower," + o[strings.Index(o, "upperdir="):]
		}
		return o
	}})
	if r := mustCall(t, e, ToolShell, map[string]any{"script": "echo one > one.txt"}); r.Workspace == nil || r.Workspace.Committed != 1 {
		t.Fatalf("first call: %+v", r)
	}
	breakNext.Store(true)
	r := mustCall(t, e, ToolShell, map[string]any{"script": "echo two > .envrc; echo two > two.txt"})
	if r.ExitCode != 0 || r.Workspace == nil || r.Workspace.Committed != 1 || len(r.Workspace.Refused) != 1 {
		t.Errorf("the call after a failed mount is not transactional: %+v, %+v", r, r.Workspace)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".envrc")); !os.IsNotExist(err) {
		t.Errorf(".envrc reached the host after a failed mount (%v)", err)
	}
	if !e.wsl.on() || breakNext.Load() {
		t.Errorf("layer on %v, the broken mount never tried %v", e.wsl.on(), breakNext.Load())
	}
}

// TestWorkspaceLayerPooledNotStale: a pooled container whose layer waited longer than
// layerMaxIdle is not handed to a call (wslayer.Root removes layers older than an hour as a
// killed serve's leftovers, under the running container): it is removed with its layer, and a
// fresh one is pooled.
func TestWorkspaceLayerPooledNotStale(t *testing.T) {
	eng := needEngine(t)
	ws := userWorkspace(t)
	e := newExec(t, eng, testPolicy(writable(ws), func(p *policy.Policy) { dksec.Of(p).Pool = 1 }))
	wait := func() *box {
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if b := e.pool.take(); b != nil {
				return b
			}
		}
		t.Fatal("no pooled container within 30 s")
		return nil
	}
	old := wait()
	old.made = time.Now().Add(-layerMaxIdle - time.Minute)
	e.pool.ready <- old
	if b := e.takeFresh(); b != nil {
		t.Fatalf("a pooled container %v old was handed out", time.Since(b.made).Round(time.Minute))
	}
	<-old.gone // the layer goes right after
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(old.layer.Dir); os.IsNotExist(err) {
			break
		}
	}
	if _, err := os.Lstat(old.layer.Dir); !os.IsNotExist(err) {
		t.Errorf("the stale container's layer is still there (%v)", err)
	}
	fresh := wait()
	e.pool.ready <- fresh
	if b := e.takeFresh(); b != fresh {
		t.Errorf("a fresh pooled container was not handed out")
	} else {
		e.pool.ready <- b
	}
}
