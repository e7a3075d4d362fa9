// Package sandbox is the docker scheme's executor: every call runs in a fresh, locked-down
// container on a Docker engine (through the Engine API, never the docker CLI), used for that
// one call and removed afterwards.
//
// Every container, cold or pooled, is built from the policy alone (spec.go): network none
// unless the policy names one, memory = memory+swap, pids and CPU quota, read-only root, a
// size-capped tmpfs /tmp (nosuid,nodev), all capabilities dropped, no-new-privileges, the
// engine's default seccomp profile minus the calls sysdeny lists (seccomp.go), uid 65534
// unless docker.user says otherwise (a writable workspace's owner), an init process,
// nofile/fsize ulimits, no host environment, the optional workspace bind mount (read-only; with
// docker.workspace_writable an overlay layer per call, committed after checks: wsmount.go), the
// optional runtime, and labels naming mcpsandbox, the serve instance and the call.
//
// Lifecycle: create -> attach -> start -> deliver -> read -> remove, on every path out (exit,
// timeout, cancel, Close). Output is demultiplexed and capped while it streams. On start, the
// containers of serve instances that are provably dead (SIGKILLed) are removed, and only those
// (reap.go). With docker.pool = N, containers are started ahead (pool.go).
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/system"
	"github.com/docker/docker/api/types/versions"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names, kept from the seed so existing prompts keep working.
const (
	ToolPython = "run_python_sandbox"
	ToolShell  = "run_shell_sandbox"
)

// Options configure New.
type Options struct {
	Logger *slog.Logger
	// Engine is the engine to use; nil connects to the one the environment names
	// (DOCKER_HOST, the docker context, or the default socket).
	Engine *engine.Client
	// Pull pulls docker.image when the engine lacks it, with progress on Progress
	// (default stderr). Without it a missing image makes Ready fail with what to do.
	Pull     bool
	Progress io.Writer
	// Audit is serve's audit log, for egress decisions (docker.network host lists); nil: the
	// executor opens the policy's audit log itself at the first decision (see SetAudit).
	Audit *audit.Log
	// EgressResolver resolves names for the egress proxy (default the system's); tests map
	// names to local servers with it.
	EgressResolver egress.Resolver
	// TestOnlyEgressAllowLoopback re-opens loopback addresses in the egress proxy, for the
	// tests whose stand-in remote hosts run on this machine. Nothing outside a _test.go file
	// sets it: serve never does, whatever the policy or the environment says.
	TestOnlyEgressAllowLoopback bool
	// EgressConns bounds one container's egress connections at once, tunnels included
	// (0: DefaultEgressConns); past it the container's new connections are answered 503 and
	// no other container is affected. All containers together are bounded by egressTotal,
	// shared fairly between them (egressShare).
	EgressConns int
	// TestOnlyLayerOptions rewrites a workspace layer's overlay options, for the test of an
	// engine that cannot mount the layer. Nothing outside a _test.go file sets it.
	TestOnlyLayerOptions func(string) string
}

// Executor runs calls in containers.
type Executor struct {
	pid1          atomic.Pointer[string] // notePid1
	pathNote      atomic.Pointer[string] // notePath
	homeLinksOnce sync.Once
	homeLinks     *homelinks.Cache // a home's links into the workspace (commitRules)
	pol           *policy.Policy
	spec          spec
	eng           *engine.Client
	ownEngine     bool
	factsOnce     sync.Once // askEngine: the engine's version and info, for Reachable and the probe
	factsDone     chan struct{}
	facts         engineFacts
	log           *slog.Logger
	opts          Options
	me            instance
	memText       string

	life context.Context
	stop context.CancelFunc

	mu     sync.Mutex
	closed bool
	bg     sync.WaitGroup
	// creating counts containers being created: Close waits for them, so a create the engine
	// finishes after Close's last removal pass cannot outlive serve.
	creating  sync.WaitGroup
	removeSem chan struct{}
	tracked   atomic.Int64 // containers created and not yet removed

	ready    chan struct{}
	readyErr error
	// callsReady closes when calls may start (openCalls), before ready; callsErr says why not.
	callsReady chan struct{}
	callsErr   error
	callsOnce  sync.Once
	layers     []executor.Layer
	pool       *pool
	oom        *oomWatch
	once       sync.Once
	egress     *egressState           // docker.network host lists: serve's proxy
	wsl        layerState             // the writable workspace's layer per container (wsmount.go)
	rroOff     atomic.Pointer[string] // why the engine cannot make binds recursively read-only (rroFailed)
	recoveries wslayer.Recoveries     // commits a dead serve left, finished at the start (serve audits them)
	sess       sessionState           // docker.reuse = "session": the sessions' containers (session.go)
	purge      purging                // layer directories only the engine can remove (purge.go)
}

// New builds the executor and starts its start-up probe (engine, image, reaper, layers, pool)
// in the background; Ready waits for it.
func New(p *policy.Policy, o Options) (*Executor, error) {
	if p.Scheme != dksec.Name {
		return nil, fmt.Errorf("docker executor given a %q policy", p.Scheme)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = os.Stderr
	}
	if _, err := engine.ParseImage(dksec.Of(p).Image); err != nil {
		return nil, fmt.Errorf("docker.image: %w", err)
	}
	if dksec.Of(p).Sessions() && dksec.Of(p).WorkspaceWritable {
		return nil, errors.New(`docker.reuse = "session" cannot be used with docker.workspace_writable = true: ` +
			`set workspace_writable = false, or reuse = "call"`)
	}
	e := &Executor{pol: p, spec: newSpec(p), eng: o.Engine, log: o.Logger, opts: o, me: self(),
		memText: p.Limits.Memory.String(), removeSem: make(chan struct{}, 8), ready: make(chan struct{}), callsReady: make(chan struct{})}
	if e.eng == nil {
		eng, err := engine.New()
		if err != nil {
			return nil, err
		}
		e.eng, e.ownEngine = eng, true
	}
	ws, note, err := CheckWorkspace(dksec.Of(p).Workspace, e.eng.Host)
	if err != nil {
		if e.ownEngine {
			e.eng.Close()
		}
		return nil, err
	}
	if note != "" {
		e.log.Warn(note)
	}
	e.spec.workspace = ws
	e.initLayer()
	eg, err := e.startEgress()
	if err != nil {
		if e.ownEngine {
			e.eng.Close()
		}
		return nil, err
	}
	if eg != nil {
		e.egress, e.spec.egress, e.spec.egressHosts = eg, true, hostsText(eg.hosts)
	}
	e.life, e.stop = context.WithCancel(context.Background())
	go func() {
		defer close(e.ready)
		// Reaping runs beside the checks and to its end even if serve is already closing or a
		// check fails (reap.go); the probe is over when both are.
		<-e.askEngine() // the client's API version settled before its calls run beside each other
		reaped := make(chan struct{})
		go func() {
			defer close(reaped)
			e.reapAtStart(context.Background())
		}()
		e.readyErr = e.probe()
		e.openCalls(e.readyErr)
		<-reaped
	}()
	return e, nil
}

// openCalls lets calls start (once): the engine answers, the image is there, the OOM watch and
// the pool run. What the probe does after that (the layers' probe container, reaping) does not
// hold calls up: on a loaded engine it took longer than a call may.
func (e *Executor) openCalls(err error) {
	e.callsOnce.Do(func() {
		e.callsErr = err
		close(e.callsReady)
	})
}

// Instance is this serve's instance id as written in the containers' labels.
func (e *Executor) Instance() string { return e.me.ID() }

// imagesHeld is "; the engine has a, b", the one nearest docker.image first, as init and verify
// say after a missing image (trial37 F14: serve's error gave only the pull's failure).
func (e *Executor) imagesHeld(ctx context.Context) string {
	if has := e.eng.ImagesHeld(context.WithoutCancel(ctx), e.spec.image); has != "" {
		return "; the engine has " + has
	}
	return ""
}

func (e *Executor) probe() error {
	ctx, cancel := context.WithTimeout(e.life, 30*time.Second)
	defer cancel()
	f, err := e.engineFacts(ctx)
	if err != nil {
		if f == nil || f.vErr != nil {
			e.layers = []executor.Layer{{Name: LayerEngine, Detail: err.Error()}}
		}
		return err
	}
	v, info := f.v, f.info
	// The client negotiated the engine's API version with Version: 1.44 (Docker 25) is the first
	// that can make a bind recursively read-only (roBind).
	e.spec.rro = !versions.LessThan(e.eng.API.ClientVersion(), "1.44")
	id, ok, err := e.eng.ImagePresent(ctx, e.spec.image)
	if err != nil {
		return err
	}
	if !ok && e.opts.Pull {
		e.log.Info("pulling the image", "image", e.spec.image, "engine", e.eng.Where())
		if err := e.eng.Pull(e.life, e.spec.image, e.opts.Progress); err != nil {
			return fmt.Errorf("docker.image %s is not in the engine at %s and pulling it failed: %w; %s%s",
				e.spec.image, e.eng.Where(), err, engine.MissingImageAdvice(e.spec.image), e.imagesHeld(ctx))
		}
		id, ok, err = e.eng.ImagePresent(ctx, e.spec.image)
		if err != nil {
			return err
		}
	}
	if !ok {
		return fmt.Errorf("docker.image %s is not in the engine at %s: %s%s", e.spec.image, e.eng.Where(), engine.MissingImageAdvice(e.spec.image), e.imagesHeld(ctx))
	}
	var imageEnv []string
	if e.spec.imageVolumes, imageEnv, err = e.imageConfig(ctx); err != nil {
		return err
	}
	var loaderNote string
	if e.spec.loaderEnv, loaderNote = loaderEnvOf(imageEnv, e.spec.loaderMounts()); loaderNote != "" {
		e.log.Warn("docker: the image's loader variables name places a call can write, or relative ones (the working directory is the workspace): the containers start with them removed, as the dynamic loader would load a library a call wrote there into pid 1 and the wrapper before any of serve's code; the program gets the same values (set them in its own code or script to load a library from the workspace)", "removed", loaderNote)
	}
	if err := CheckRuntime(e.eng, info, e.spec.runtime, e.spec.egress); err != nil {
		return err
	}
	if f.netErr != nil {
		return f.netErr
	}
	rtName := runtimeName(info, e.spec.runtime)
	if rt, ok := info.Runtimes[rtName]; ok {
		e.spec.gvisor = isGVisor(rtName, rt.Path)
		e.spec.gvisorSeccomp = hasOCISeccomp(rt.Args)
	}
	e.watchOOM()
	if n := dksec.Of(e.pol).Pool; n > 0 {
		e.startPool(n, info.NCPU)
	}
	e.openCalls(nil)
	e.layerProbe()
	ls, err := e.inspectLayers(ctx, v.Version, v.APIVersion, id, info.SecurityOptions, info.MemoryLimit, info.SwapLimit, info.PidsLimit, info.CPUCfsQuota)
	if errors.Is(err, engine.ErrUnreachable) && !mutated("docker-late-probe-fatal") {
		// The engine went away after the calls were opened: the client has its tools by now,
		// and ending serve here broke its session (trial39 F1: an engine lost in serve's first
		// second). Each call says the engine is gone until it is back, as after the start-up.
		e.log.Warn("the Docker engine stopped answering during serve's start-up checks: serving on; each call says so until the engine is back", "err", err)
		e.layers = []executor.Layer{{Name: LayerEngine, Detail: "not checked: " + err.Error()}}
		return nil
	}
	if err != nil {
		return err
	}
	e.layers = ls
	return nil
}

// imageConfig is what docker.image declares: its VOLUME directories (sorted) and its Env.
func (e *Executor) imageConfig(ctx context.Context) (vs, env []string, err error) {
	ins, err := e.eng.API.ImageInspect(ctx, e.spec.image)
	if err != nil {
		return nil, nil, fmt.Errorf("inspect docker.image %s: %w", e.spec.image, e.eng.Unreachable(err))
	}
	if ins.Config != nil {
		for v := range ins.Config.Volumes {
			vs = append(vs, v)
		}
		env = ins.Config.Env
	}
	slices.Sort(vs)
	return vs, env, nil
}

// Reachable says whether the engine answers, at once (serve asks before it says it is serving:
// its start-up, which would find out, runs after the client's first answers, and a serve that
// ended then left a client "connected" with no tools, trial35 F7).
//
// It also makes the start's checks that are quick and final (docker.runtime, docker.network: one
// engine call each): a policy that fails them is refused before "serving" is said, so the client
// shows the server failed, with the reason in its log. Before, the start found out after the
// client's first answers, and the client showed it connected (trial46 F1). The image's presence,
// and its pull, stay in the start: a pull may take minutes.
//
// The engine's version and info are asked once (askEngine), both at once, for Reachable and the
// start-up's probe alike, and the network beside them: each takes 45-90 ms on a busy engine, and
// Reachable asking them again, one after another, while the probe asked its own, held serve's
// first answer ~50 ms longer (atk47b F5).
func (e *Executor) Reachable(ctx context.Context) error {
	f, err := e.engineFacts(ctx)
	if err != nil || mutated("docker-start-checks-late") {
		return err
	}
	if err := CheckRuntime(e.eng, f.info, e.spec.runtime, e.spec.egress); err != nil {
		return err
	}
	return f.netErr
}

// engineFacts are the engine's version, system info and docker.network's check.
type engineFacts struct {
	v                  types.Version
	info               system.Info
	vErr, iErr, netErr error
}

// askEngine asks the engine for its facts once (the first caller starts it, bounded by its own
// 30 s and serve's life, not by a caller's context); the channel closes when they are in e.facts. Version comes
// first, alone: it settles the client's API version, which the docker client's other calls read
// unlocked (a race with a call made beside the negotiation); then the info and the network at once.
func (e *Executor) askEngine() <-chan struct{} {
	e.factsOnce.Do(func() {
		e.factsDone = make(chan struct{})
		go func() {
			defer close(e.factsDone)
			base := e.life // serve's close ends it (nil: an executor New did not make, tests)
			if base == nil {
				base = context.Background()
			}
			ctx, cancel := context.WithTimeout(base, 30*time.Second)
			defer cancel()
			if e.facts.v, e.facts.vErr = e.eng.Version(ctx); e.facts.vErr != nil {
				return
			}
			var wg sync.WaitGroup
			wg.Go(func() { e.facts.netErr = CheckNetwork(ctx, e.eng, dksec.Of(e.pol).NetworkName()) })
			e.facts.info, e.facts.iErr = e.eng.Info(ctx)
			wg.Wait()
		}()
	})
	return e.factsDone
}

// engineFacts waits for askEngine's answers (or ctx), each error said as the start says it.
func (e *Executor) engineFacts(ctx context.Context) (*engineFacts, error) {
	if mutated("docker-engine-asked-twice") {
		f := &engineFacts{}
		if f.v, f.vErr = e.eng.Version(ctx); f.vErr == nil {
			f.info, f.iErr = e.eng.Info(ctx)
			f.netErr = CheckNetwork(ctx, e.eng, dksec.Of(e.pol).NetworkName())
		}
		return f, f.err(e)
	}
	select {
	case <-e.askEngine():
	case <-ctx.Done():
		return nil, fmt.Errorf("the docker scheme needs a Docker engine: the engine at %s did not answer in time: %w", e.eng.Where(), ctx.Err())
	}
	return &e.facts, e.facts.err(e)
}

func (f *engineFacts) err(e *Executor) error {
	if f.vErr != nil {
		return fmt.Errorf("the docker scheme needs a Docker engine: %w", f.vErr)
	}
	if f.iErr != nil {
		return fmt.Errorf("the docker scheme needs a Docker engine: %w", f.iErr) // Info said where
	}
	return nil
}

// Ready implements executor.Executor.
func (e *Executor) Ready() error {
	<-e.ready
	return e.readyErr
}

// Layers implements executor.Executor: what the engine recorded for a container built from this
// policy (inspected, not assumed), and what the engine can enforce.
func (e *Executor) Layers() []executor.Layer {
	<-e.ready
	return e.pid1Layer(e.liveLayers(e.layers))
}

// Tools implements executor.Executor.
func (e *Executor) Tools() []executor.Tool {
	open := e.spec.network != "none" || e.spec.egress
	timeoutProp := func(s *jsonschema.Schema) {
		t := s.Properties["timeout"]
		t.ExclusiveMinimum = new(float64)
		t.Description = fmt.Sprintf("seconds; at most limits.timeout (%s), which is also the default", e.pol.Limits.Timeout)
	}
	where := "/tmp (a small tmpfs) is the only writable place"
	if e.spec.workspace != "" {
		where = "the workspace is at /workspace"
		if e.spec.wsWrite {
			where += " (writable" + e.layerToolNote() + ")"
		} else {
			where += " (read-only); /tmp (a small tmpfs) is the only writable place"
		}
	}
	netText := "no network"
	switch {
	case e.spec.egress:
		netText = "no network except HTTP(S) to " + e.spec.egressHosts + " through a proxy (HTTP_PROXY/HTTPS_PROXY are set; other hosts get 403)"
	case open:
		netText = "network " + e.spec.network
	}
	life := "Runs in a fresh container used for this call only and removed afterwards"
	if dksec.Of(e.pol).Sessions() {
		life = "Runs in this session's own container, kept for the session's calls: files in /tmp persist, and Python variables persist in one interpreter " +
			"(a call that times out loses the container and all of that)"
	}
	common := fmt.Sprintf("%s: %s, %s of memory, "+
		"%d processes, %g CPUs, uid %s, %s. %s", life, netText, e.memText, e.spec.pids, e.pol.Limits.CPUs, e.spec.user, where, picturesNote)
	pySchema := executor.InputSchema[pythonArgs](timeoutProp)
	if dksec.Of(e.pol).Sessions() {
		pySchema = executor.InputSchema[sessionPythonArgs](timeoutProp)
	}
	ann := func(title string) *mcp.ToolAnnotations {
		destructive := e.spec.workspace != "" && e.spec.wsWrite
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: false, DestructiveHint: &destructive, IdempotentHint: false, OpenWorldHint: &open}
	}
	tools := []executor.Tool{{
		Name:        ToolPython,
		Title:       "Run Python in a sandbox container",
		Description: "Run a Python 3 program (its source in code) and return its exit code, stdout and stderr. " + common,
		InputSchema: pySchema,
		Annotations: ann("Run Python in a sandbox container"),
		Run:         func(ctx context.Context, c executor.Call) (*executor.Result, error) { return e.call(ctx, c, "python") },
	}, {
		Name:        ToolShell,
		Title:       "Run a shell script in a sandbox container",
		Description: "Run a POSIX sh script (its text in script) and return its exit code, stdout and stderr. " + common,
		InputSchema: executor.InputSchema[shellArgs](timeoutProp),
		Annotations: ann("Run a shell script in a sandbox container"),
		Run:         func(ctx context.Context, c executor.Call) (*executor.Result, error) { return e.call(ctx, c, "shell") },
	}}
	if dksec.Of(e.pol).Sessions() {
		tools = append(tools, executor.FileTools(sessionFiles{e}, int64(e.pol.Limits.MaxFileBytes), sessionFilesWhere(where), "", ann(""))...)
	}
	return append(tools, e.callFileTools()...)
}

// pythonArgs and shellArgs are the two tools' arguments as clients see them (their input
// schemas); a call decodes into callArgs, which takes either, so a python call given a script
// gets a refusal that says so.
type pythonArgs struct {
	Code    string  `json:"code" jsonschema:"Python source, run as __main__"`
	Timeout float64 `json:"timeout,omitempty"`
}

type shellArgs struct {
	Script  string  `json:"script" jsonschema:"sh script; stdin is empty"`
	Timeout float64 `json:"timeout,omitempty"`
}

type callArgs struct {
	Code    *string  `json:"code"`
	Script  *string  `json:"script"`
	Timeout *float64 `json:"timeout"`
	Reset   *bool    `json:"reset"`
}

// sessionPythonArgs is run_python_sandbox's arguments with docker.reuse = "session".
type sessionPythonArgs struct {
	Code    string  `json:"code" jsonschema:"Python source, run as __main__ in the session's interpreter: names defined by earlier calls of this session are there"`
	Reset   bool    `json:"reset,omitempty" jsonschema:"start a fresh interpreter first (the session's variables and imports are dropped; its files stay)"`
	Timeout float64 `json:"timeout,omitempty"`
}

func (e *Executor) call(ctx context.Context, c executor.Call, kind string) (*executor.Result, error) {
	accepted := time.Now() // what another writer changes in the workspace from now on is a conflict (runBox)
	var a callArgs
	if err := executor.DecodeArgs(c.Args, &a); err != nil {
		// decoded again as this tool's own, so an unknown argument's refusal names the
		// arguments this tool takes, not both tools' (trial25)
		var own any = &struct {
			Code    *string  `json:"code"`
			Timeout *float64 `json:"timeout"`
		}{}
		if kind == "shell" {
			own = &struct {
				Script  *string  `json:"script"`
				Timeout *float64 `json:"timeout"`
			}{}
		}
		if oerr := executor.DecodeArgs(c.Args, own); oerr != nil {
			return nil, oerr
		}
		return nil, err
	}
	src := a.Code
	if kind == "shell" {
		src = a.Script
		if a.Code != nil {
			return nil, executor.Refuse("tool.arguments", "%s takes script, not code", ToolShell)
		}
		if a.Reset != nil {
			return nil, executor.Refuse("tool.arguments", "%s takes no reset (it starts a fresh interpreter for %s)", ToolShell, ToolPython)
		}
	} else if a.Script != nil {
		return nil, executor.Refuse("tool.arguments", "%s takes code, not script", ToolPython)
	}
	if src == nil {
		field := map[string]string{"python": "code", "shell": "script"}[kind]
		return nil, executor.Refuse("tool.arguments", "%s is required", field)
	}
	timeout := c.Timeout
	if a.Timeout != nil {
		if !(*a.Timeout > 0) {
			return nil, executor.Refuse("tool.arguments", "timeout must be a positive number of seconds, got %v", *a.Timeout)
		}
		if d := time.Duration(*a.Timeout * float64(time.Second)); d < timeout {
			timeout = d
		}
	}
	if timeout <= 0 {
		timeout = e.pol.Limits.Timeout.Duration
	}
	// The timeout clock starts when the program is delivered (run's timer), not when serve
	// handed over the call: a cold container's creation must not eat the program's time. So
	// serve's deadline is not passed on as such (a client's cancel is); it only bounds the
	// call, with startGrace for the container's start.
	var hardStop time.Time
	if d, ok := ctx.Deadline(); ok {
		hardStop = d.Add(startGrace)
	}
	ctx, cancel := e.callContext(ctx)
	defer cancel()
	// The first calls of a serve wait for its start-up checks (engine, image, reaping, the
	// layers' probe container), bounded by the same hard stop: on a loaded engine they can
	// take longer than the call may.
	if err := e.readyBy(ctx, hardStop); errors.Is(err, errStartTimedOut) {
		return withTimeout(&executor.Result{TimedOut: true, ExitCode: 137,
			Stderr: "[mcpsandbox: serve's start-up checks of the docker engine did not finish within the call's timeout; the program never ran]\n"}, timeout), nil
	} else if err != nil {
		return nil, err
	}
	if dksec.Of(e.pol).Sessions() && c.Session != "" {
		res, err := e.sessionCall(ctx, c, kind, *src, a.Reset != nil && *a.Reset, timeout, hardStop, nil)
		return withTimeout(res, timeout), err
	}
	var b *box
	if e.pool != nil {
		b = e.takeFresh()
	}
	if b != nil {
		res, err := e.runOwnBox(ctx, b, c, kind, *src, timeout, hardStop, accepted)
		e.pool.release() // the replacement starts now, off this call's path
		if !errors.Is(err, errDelivery) {
			return withTimeout(res, timeout), err
		}
		e.log.Warn("a pooled container did not take the program; running the call in a fresh one", "err", err)
	}
	b, err := e.newBoxBy(ctx, hardStop)
	if errors.Is(err, errStartTimedOut) {
		return withTimeout(&executor.Result{TimedOut: true, ExitCode: 137,
			Stderr: "[mcpsandbox: the container did not start within the call's timeout; the program never ran]\n"}, timeout), nil
	}
	if err != nil {
		return nil, err
	}
	res, err := e.runOwnBox(ctx, b, c, kind, *src, timeout, hardStop, accepted)
	return withTimeout(res, timeout), err
}

// runOwnBox runs call c in b, a container of its own: its egress decisions name the call, and
// the refusals its proxy takes meanwhile go in its result (endNotes).
func (e *Executor) runOwnBox(ctx context.Context, b *box, c executor.Call, kind, src string, timeout time.Duration, hardStop, accepted time.Time) (*executor.Result, error) {
	b.eg.setSession(c.Session)
	b.eg.setCall(executor.CallID(ctx))
	b.eg.beginNotes()
	res, err := e.runBox(ctx, b, kind, src, timeout, hardStop, accepted, c.MaxOutput)
	b.eg.endNotes(res)
	return res, err
}

var errStartTimedOut = errors.New("the container did not start before the call's hard stop")

// readyBy waits until calls may start (openCalls), bounded by the call's hard stop (none if
// zero) and its cancellation.
func (e *Executor) readyBy(ctx context.Context, hardStop time.Time) error {
	var stop <-chan time.Time
	if !hardStop.IsZero() {
		t := time.NewTimer(time.Until(hardStop))
		defer t.Stop()
		stop = t.C
	}
	select {
	case <-e.callsReady: // ready wins over a hard stop that passed meanwhile
		return e.callsErr
	default:
	}
	select {
	case <-e.callsReady:
		return e.callsErr
	case <-stop:
		return errStartTimedOut
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newBoxBy is newBox bounded by the call's hard stop, so a slow engine cannot stretch a call
// past its timeout plus startGrace: a container that starts later is removed when it does.
// The start counts as a create in flight, so Close waits for it and nothing outlives serve.
func (e *Executor) newBoxBy(ctx context.Context, hardStop time.Time) (*box, error) {
	if hardStop.IsZero() {
		return e.newBox(false)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errors.New("serve is shutting down")
	}
	e.creating.Add(1)
	e.mu.Unlock()
	type made struct {
		b   *box
		err error
	}
	var (
		ch        = make(chan made, 1)
		mu        sync.Mutex
		abandoned bool
	)
	go func() {
		defer e.creating.Done()
		b, err := e.newBox(false)
		mu.Lock()
		left := abandoned
		if !left {
			ch <- made{b, err}
		}
		mu.Unlock()
		if left && b != nil {
			e.destroy(b)
			e.holdStarting(b)
		}
	}()
	t := time.NewTimer(time.Until(hardStop))
	defer t.Stop()
	select {
	case m := <-ch:
		return m.b, m.err
	case <-t.C:
	case <-ctx.Done():
	}
	mu.Lock()
	abandoned = true
	mu.Unlock()
	select { // made just before it was abandoned: not the call's any more
	case m := <-ch:
		if m.b != nil {
			e.destroy(m.b)
			e.holdStarting(m.b)
		}
	default:
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errStartTimedOut
}

// withTimeout records the timeout the call really had (the tool's own, when shorter than the
// policy's), so the text rendering names it.
func withTimeout(res *executor.Result, d time.Duration) *executor.Result {
	if res != nil {
		res.Timeout = d
	}
	return res
}

// startGrace is how far past serve's deadline a call may run: the time its container's start
// took from the program, at most this.
const startGrace = 2 * time.Second

// callContext follows ctx's cancellation but not its deadline.
func (e *Executor) callContext(ctx context.Context) (context.Context, func()) {
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel(ctx.Err())
		}
	})
	return cctx, func() { stop(); cancel(nil) }
}

// Close implements executor.Executor: stops refilling, removes the pooled containers, waits for
// every pending removal, then removes anything else labelled with this instance (a create
// whose answer was lost). Safe to call more than once.
func (e *Executor) Close() error {
	var err error
	e.once.Do(func() {
		e.stop()
		e.closeSessions()
		<-e.ready // the probe (which starts the pool) ends soon once life is cancelled
		if e.pool != nil {
			for _, b := range e.pool.drain() {
				e.destroy(b)
			}
		}
		e.mu.Lock()
		e.closed = true
		e.mu.Unlock()
		e.creating.Wait()
		e.bg.Wait()
		wslayer.WaitRemoved()
		e.waitPurges()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err = e.removeWhere(ctx, filters.NewArgs(filters.Arg("label", LabelInstance+"="+e.me.ID())), func(map[string]string) bool { return true })
		if errors.Is(err, engine.ErrUnreachable) {
			err = nil // no engine, nothing of ours left in it to remove
		}
		e.egress.close()
		if e.ownEngine {
			e.eng.Close()
		}
	})
	return err
}

// removeWhere removes every container matching f for which keep says remove; it returns how
// many it removed.
func (e *Executor) removeWhere(ctx context.Context, f filters.Args, remove func(labels map[string]string) bool) (int, error) {
	cs, err := e.eng.API.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, e.eng.Unreachable(err)
	}
	n := 0
	var errs []error
	for _, c := range cs {
		if !remove(c.Labels) {
			continue
		}
		if err := e.eng.API.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %.12s: %w", c.ID, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// CheckNetwork: a docker network the policy names exists in the engine. A name the engine lacks
// fails every call's container start ("network pypi.org not found"); it is most often a host
// meant as a list (network = "pypi.org" for ["pypi.org"]: trial34 F1), which the refusal says.
func CheckNetwork(ctx context.Context, eng *engine.Client, name string) error {
	if name == "none" || mutated("docker-network-unchecked") {
		return nil
	}
	_, err := eng.API.NetworkInspect(ctx, name, network.InspectOptions{})
	switch {
	case err == nil:
		return nil
	case isNotFound(err):
		msg := fmt.Sprintf("docker.network %q: the engine at %s has no such network (docker network ls lists them)", name, eng.Where())
		if strings.Contains(name, ".") {
			msg += fmt.Sprintf(`; to let calls reach that host, write it as a list: network = [%q] (through serve's egress proxy)`, name)
		} else {
			msg += `; create it (docker network create ` + name + `), or write network = "none"`
		}
		return errors.New(msg)
	}
	return fmt.Errorf("ask the engine at %s for docker.network %q: %w", eng.Where(), name, err)
}

func isNotFound(err error) bool {
	return cerrdefs.IsNotFound(err) || strings.Contains(err.Error(), "is already in progress")
}

// Tracked is how many containers this executor created and has not yet removed (tests, bench).
func (e *Executor) Tracked() int64 { return e.tracked.Load() }

// Recovered hands serve the commits a dead serve left that this one finished (executor.Recoverer).
func (e *Executor) Recovered() []executor.Recovery { return e.recoveries.Take() }
