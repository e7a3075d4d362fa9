package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// A call's workspace layer is made ahead of it (off the call's path), used by that call only,
// and current: a workspace whose mode changed after its layer was made gets a layer made now,
// so the call sees the workspace's mode as it is (the merged root shows the upper directory's
// attributes). Red without the pool (the prepared layer is not the call's, and stays), and
// with a stale layer taken (mutant layer-prepared-stale: the call sees the old mode).
func TestPreparedLayerUsedOnceAndCurrent(t *testing.T) {
	e := layeredExecutor(t)
	prepared := func() string { return pooledLayer(t, e) }
	run := func(name string, args ...string) string {
		a, _ := json.Marshal(map[string]any{"command": name, "args": args})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := e.run(ctx, executor.Call{Args: a, Timeout: 20 * time.Second, MaxOutput: 64 << 10})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("%s %q: %v %+v", name, args, err, res)
		}
		return res.Stdout
	}
	first := prepared()
	run("python3", "-c", "open('made.txt', 'w').write('x')")
	if _, err := os.Stat(first); err == nil {
		t.Errorf("the prepared layer %s is still there after the call: the call did not use it", first)
	}
	if b, err := os.ReadFile(e.ws + "/made.txt"); err != nil || string(b) != "x" {
		t.Errorf("the call's write was not committed through the prepared layer: %q %v", b, err)
	}
	second := prepared()
	if second == first {
		t.Fatalf("the same layer %s was prepared twice", first)
	}
	if err := os.Chmod(e.ws, 0o750); err != nil {
		t.Fatal(err)
	}
	if mode := run("python3", "-c", "import os, stat; print(stat.filemode(os.stat('.').st_mode))"); !strings.HasPrefix(mode, "drwxr-x---") {
		t.Errorf("the call saw its workspace as %q after a chmod to 0750: a layer made before the chmod", strings.TrimSpace(mode))
	}
	if _, err := os.Stat(second); err == nil {
		t.Errorf("the stale prepared layer %s was not removed", second)
	}
}

// layeredExecutor is pythonExecutor (direct starts) where calls get a workspace layer.
func layeredExecutor(t *testing.T) *Executor {
	t.Helper()
	e := pythonExecutor(t, nil, false)
	if e.layerRoot == "" {
		t.Skip("no transactional workspace here: " + e.layerWhy)
	}
	return e
}

// pooledLayer waits for the layer made ahead of e's next call, and says which it is.
func pooledLayer(t *testing.T, e *Executor) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(e.layers) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no workspace layer was prepared ahead of the call")
		}
		time.Sleep(5 * time.Millisecond)
	}
	p := <-e.layers
	e.layers <- p
	return p.l.Dir
}

// A layer being made ahead of a call as serve stops is pooled and removed before Close returns:
// none is left under the layer root for the next serve to sweep (a serve whose process ends at
// Close left it there). The filler is held, once Close has begun, for 200 ms: Close must wait
// for it. Red with the filler untracked (mutant layers-fill-untracked).
func TestPreparedLayerDoneBeforeClose(t *testing.T) {
	e := pythonExecutor(t, nil, false)
	if e.layerRoot == "" {
		t.Skip("no transactional workspace here: " + e.layerWhy)
	}
	// The start's own filler done (its pool full, and it gone: one still finishing would make
	// the fill below return at once), then the pool emptied: the next fill makes one.
	deadline := time.Now().Add(10 * time.Second)
	for (len(e.layers) == 0 || e.layersFilling.Load()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	e.closeLayers()
	held := make(chan struct{})
	var once sync.Once
	hook := func(got *Executor) {
		if got != e {
			return
		}
		for !e.closed.Load() {
			time.Sleep(time.Millisecond)
		}
		once.Do(func() { close(held) })
		time.Sleep(200 * time.Millisecond)
	}
	layerMadeHook.Store(&hook)
	t.Cleanup(func() { layerMadeHook.Store(nil) })
	go e.prepareLayer()
	for !e.layersFilling.Load() {
		time.Sleep(time.Millisecond) // a filler has begun
	}
	e.Close()
	select {
	case <-held:
	default:
		t.Fatal("the filler made no layer before Close (control)")
	}
	ents, _ := os.ReadDir(e.layerRoot)
	for _, d := range ents {
		if strings.HasPrefix(d.Name(), "call-"+strconv.Itoa(os.Getpid())+"-") {
			t.Errorf("a layer was left under the layer root after Close: %s", d.Name())
		}
	}
}
