package sandbox

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A call that arrives while serve's start-up checks still run waits for them no longer than
// its hard stop (the harness's wall_time saw calls wait out a slow probe on a loaded engine),
// and a client's cancel ends the wait; once ready, the probe's verdict is the answer.
func TestReadyByBounded(t *testing.T) {
	e := &Executor{callsReady: make(chan struct{})}
	start := time.Now()
	if err := e.readyBy(context.Background(), time.Now().Add(100*time.Millisecond)); !errors.Is(err, errStartTimedOut) {
		t.Fatalf("probe still running at the hard stop: got %v, want errStartTimedOut", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("returned after %s, before the hard stop", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.readyBy(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: got %v", err)
	}
	e.openCalls(errors.New("no engine"))
	if err := e.readyBy(context.Background(), time.Now().Add(-time.Second)); err == nil || err.Error() != "no engine" {
		t.Errorf("ready (failed) with the hard stop already past: got %v, want the probe's error", err)
	}
}

// Ready says what is wrong and what to do.
func TestReadyErrors(t *testing.T) {
	eng := needEngine(t)
	e, err := New(testPolicy(func(p *policy.Policy) { dksec.Of(p).Image = "mcpsandbox-absent:" + strconv.Itoa(os.Getpid()) }), Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	err = e.Ready()
	if err == nil || !strings.Contains(err.Error(), "is not in the engine at unix://") || !strings.Contains(err.Error(), "docker pull mcpsandbox-absent") ||
		!strings.Contains(err.Error(), "build-test-image.sh") {
		t.Errorf("missing image: %v", err)
	}
	r, cerr := call(t, e, ToolShell, map[string]any{"script": "true"})
	if cerr == nil {
		t.Errorf("a call ran without an image: %+v", r)
	}
	// a misspelt image: the error names the one the engine has, nearest first, as init and
	// verify do (trial37 F14)
	typo, err := New(testPolicy(func(p *policy.Policy) { dksec.Of(p).Image = testImage() + "x" }), Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer typo.Close()
	if err := typo.Ready(); err == nil || !strings.Contains(err.Error(), "; the engine has "+testImage()) {
		t.Errorf("misspelt image: %v, want the engine's %s named", err, testImage())
	}

	t.Setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
	e2, err := New(testPolicy(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	err = e2.Ready()
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/docker.sock (DOCKER_HOST)") || !strings.Contains(err.Error(), "dockerd") {
		t.Errorf("no engine: %v", err)
	}
	if ls := e2.Layers(); len(ls) != 1 || ls[0].Active {
		t.Errorf("layers without an engine: %+v", ls)
	}
}

// The engine lost during serve's start-up checks, after the calls were opened (the layers'
// probe container), does not end serve: the client has its tools by then, and its session
// broke (trial39 F1). The layers say what was not checked; each call says the engine is gone.
// Here a relay to the engine stops answering at the probe's container create. Red with mutant
// docker-late-probe-fatal.
func TestEngineLostDuringLateProbeKeepsServing(t *testing.T) {
	var gone atomic.Bool
	eng := relayEngine(t, func(r *http.Request) bool {
		if strings.HasSuffix(r.URL.Path, "/containers/create") {
			gone.Store(true)
		}
		return !gone.Load()
	})
	if err := (&Executor{eng: eng, pol: testPolicy(), spec: newSpec(testPolicy())}).Reachable(context.Background()); err != nil { // as serve asks before serving
		t.Fatal(err)
	}
	e, err := New(testPolicy(), Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Ready(); err != nil {
		t.Fatalf("the engine lost after the calls were opened ended serve's start-up: %v", err)
	}
	if !gone.Load() {
		t.Fatal("the relay never saw the probe's container create: the test tests nothing")
	}
	if ls := e.Layers(); len(ls) != 1 || !strings.Contains(ls[0].Detail, "not checked") {
		t.Errorf("layers after the engine was lost: %+v", ls)
	}
	if r, err := call(t, e, ToolShell, map[string]any{"script": "true"}); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("a call with the engine gone: %+v, %v; want the engine named unreachable", r, err)
	}
}

// serve asks Reachable before it says it is serving: a docker.runtime the engine lacks and a
// docker.network it does not have are refused there, with the start's own messages, so the
// client shows the server failed (trial46 F1: the start found out after the client's first
// answers, and the client showed it connected). The policy as init writes it passes. Red with
// mutant docker-start-checks-late.
func TestReachableRefusesWhatTheStartWould(t *testing.T) {
	eng := needEngine(t)
	for _, c := range []struct {
		name string
		mut  func(*policy.Policy)
		want string
	}{
		{"runtime", func(p *policy.Policy) { dksec.Of(p).Runtime = "kata" }, `has no runtime "kata"`},
		{"network", func(p *policy.Policy) {
			dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "mcpsandbox-no-such-net"})
		}, "has no such network"},
		{"ordinary", func(*policy.Policy) {}, ""},
	} {
		e, err := New(testPolicy(c.mut), Options{Engine: eng})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = e.Reachable(ctx)
		cancel()
		e.Close()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Reachable = %v, want %q", c.name, err, c.want)
		}
	}
}

// relayEngine is a client of the test's engine through a relay that shows each request to pass
// first: false cuts its connection (an engine gone).
func relayEngine(t *testing.T, pass func(*http.Request) bool) *engine.Client {
	t.Helper()
	needEngine(t)
	target := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		target = strings.TrimPrefix(h, "unix://")
	} else if h != "" {
		t.Skipf("SKIP: the relay speaks to a unix socket engine, DOCKER_HOST is %s", h)
	}
	sock := filepath.Join(t.TempDir(), "relay.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL.Scheme, r.Out.URL.Host = "http", "docker" },
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", target)
		}},
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !pass(r) {
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	eng, err := engine.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// serve's start asks the engine its version and info once: Reachable (before serve answers) and
// the start-up's probe (begun at New, beside it) share the answers. Each asking its own held the
// first answer ~50 ms longer on a busy engine (atk47b F5). Red with mutant docker-engine-asked-twice.
func TestEngineAskedOnceAtStart(t *testing.T) {
	var mu sync.Mutex
	asked := map[string]int{}
	eng := relayEngine(t, func(r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		asked[path.Base(r.URL.Path)]++
		return true
	})
	e, err := New(testPolicy(), Options{Engine: eng}) // as serve: New, then Reachable
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Reachable(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if asked["version"] != 1 || asked["info"] != 1 {
		t.Errorf("the engine was asked its version %d times and its info %d times at serve's start, want once each (%v)", asked["version"], asked["info"], asked)
	}
}
