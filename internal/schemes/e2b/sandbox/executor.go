package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/internal/procid"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Metadata keys that label a sandbox as ours.
const (
	LabelOwner    = "mcpsandbox"          // "1"
	LabelHost     = "mcpsandbox_host"     // hostname of the serve that created it
	LabelInstance = "mcpsandbox_instance" // host/pid/start of that serve
	LabelPID      = "mcpsandbox_pid"
	LabelStart    = "mcpsandbox_start" // the serve process's start time, so a reused pid is not mistaken for it
	// Which machine, boot and pid namespace the pid is counted in: host names repeat across the
	// machines that share a team's key ("ubuntu", a cloned image's), and a pid means something
	// else in another pid namespace (a container's, bubblewrap's). The sweep kills a sandbox
	// only when these say its serve is surely dead (atk37 F3).
	LabelMachine = "mcpsandbox_machine"
	LabelBoot    = "mcpsandbox_boot"
	LabelPIDNS   = "mcpsandbox_pidns"
)

// Layer IDs this executor reports (explain's threat table names them).
const (
	LayerMicroVM      = "e2b-microvm"
	LayerLifecycle    = "e2b-lifecycle"
	LayerNoInternet   = "e2b-no-internet"
	LayerKeyStaysHome = "e2b-key-stays-home"
)

// LayerIDs lists them in report order.
var LayerIDs = []string{LayerMicroVM, LayerLifecycle, LayerNoInternet, LayerKeyStaysHome}

// killTimeout bounds a kill that runs after its call (the call's own ctx may be over).
const killTimeout = 10 * time.Second

// Options configure New.
type Options struct {
	// Getenv reads the environment (the API key, E2B_DOMAIN, E2B_API_URL, E2B_SANDBOX_URL); default os.Getenv.
	Getenv func(string) string
	Logger *slog.Logger
	// HTTP overrides the HTTP client (tests).
	HTTP *http.Client
	// Retries / Backoff / RequestTimeout override the client's defaults (tests).
	Retries        int
	Backoff        time.Duration
	RequestTimeout time.Duration
	// NoReap skips killing the sandboxes of dead serve instances at start.
	NoReap bool
	// Leash overrides defaultLeash (tests).
	Leash time.Duration
	// NoUndertaker: do not start the undertaker process (see undertaker.go).
	NoUndertaker bool
}

// Executor proxies calls to E2B sandboxes.
type Executor struct {
	pol      *policy.Policy
	cfg      e2bsec.E2B
	client   *Client
	keyErr   error
	log      *slog.Logger
	host     string
	instance string
	me       procid.Instance // this serve, as its sandboxes' labels say
	leash    time.Duration
	labels   map[string]string

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	reaped chan struct{}

	mu       sync.Mutex
	closed   bool
	sessions map[string]*session
	live     map[string]*Sandbox // every sandbox this serve holds
	// users counts the calls running in each sandbox, and retired marks a session sandbox a
	// broken call left behind: it is killed when its last call ends, never under a sibling call.
	users   map[*Sandbox]int
	retired map[*Sandbox]bool
	// placed counts the session sandboxes alive or being created: at most e2b.max_sessions.
	placed   int
	inflight sync.WaitGroup
	bg       sync.WaitGroup // kills that outlived their call's wait (killSoon)
	under    *undertaker    // nil if it could not start
}

type session struct {
	mu    sync.Mutex // one creation at a time
	sb    *Sandbox   // set with mu held, read and cleared with the executor's mu
	timer *time.Timer
	leash context.CancelFunc // stops the sandbox's keepalive
	note  string             // what the session's next call is told (its sandbox was killed for another's)
}

func (s *session) stop() {
	if s.timer != nil {
		s.timer.Stop()
	}
	if s.leash != nil {
		s.leash()
	}
}

// defaultLeash is how long a sandbox outlives this serve if serve dies without killing it
// (SIGKILL, crash) and its undertaker died with it: every sandbox is created with at most this
// lifetime and kept alive (POST /sandboxes/{id}/timeout, every leash/3) while its call or session
// needs it. The undertaker normally kills them within a second of serve's death.
const defaultLeash = 30 * time.Second

// New builds the executor from the policy's [e2b] section and the environment.
func New(p *policy.Policy, o Options) (*Executor, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	cfg := *e2bsec.Of(p)
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "E2B_API_KEY"
	}
	if cfg.Template == "" {
		return nil, errors.New("e2b.template is empty: name the E2B template to start (e.g. \"code-interpreter-v1\")")
	}
	if cfg.Reuse != "call" && cfg.Reuse != "session" {
		return nil, fmt.Errorf("e2b.reuse = %q: use \"call\" (a new sandbox per call) or \"session\" (one per MCP session)", cfg.Reuse)
	}
	if cfg.SandboxTimeout.Duration <= 0 {
		cfg.SandboxTimeout.Duration = 5 * time.Minute
	}
	cc, err := clientConfig(cfg, o)
	if err != nil {
		return nil, err
	}
	key := cc.APIKey
	e := &Executor{pol: p, cfg: cfg, log: o.Logger, sessions: map[string]*session{}, live: map[string]*Sandbox{},
		users: map[*Sandbox]int{}, retired: map[*Sandbox]bool{},
		reaped: make(chan struct{}), leash: o.Leash}
	if e.leash <= 0 {
		e.leash = defaultLeash
	}
	e.client = NewClient(cc)
	if key == "" {
		// unmet: the sandbox the policy describes does not depend on it, only serve's start here
		e.keyErr = &executor.UnmetError{Until: "$" + cfg.APIKeyEnv + " is set",
			Err: fmt.Errorf("the E2B API key variable $%s is empty or unset: export %s=<your key from https://e2b.dev/dashboard?tab=keys> in the environment serve starts in (e2b.api_key_env names the variable; the key never goes in the policy file)", cfg.APIKeyEnv, cfg.APIKeyEnv)}
	}
	e.me = procid.Self()
	e.host = e.me.Host
	e.instance = e.me.ID()
	e.labels = map[string]string{LabelOwner: "1", LabelHost: e.host, LabelInstance: e.instance,
		LabelPID: strconv.Itoa(e.me.PID), LabelStart: strconv.FormatUint(e.me.Start, 10),
		LabelMachine: e.me.Machine, LabelBoot: e.me.Boot, LabelPIDNS: e.me.PIDNS}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if e.keyErr == nil && !o.NoUndertaker && !mutated("e2b-undertaker") {
		u, err := startUndertaker(e.client.cfg)
		if err != nil {
			e.log.Warn("e2b: could not start the undertaker; if serve is killed, its sandboxes live on until their leash ends", "leash", e.leash, "err", e.client.redactErrText(err.Error()))
		}
		e.under = u
	}
	if o.NoReap || e.keyErr != nil {
		close(e.reaped)
	} else {
		go e.reap()
	}
	return e, nil
}

// clientConfig is the client's configuration from the policy's [e2b] section (api_key_env
// defaulted) and the environment: the key, the API's and the sandboxes' addresses, checked.
func clientConfig(cfg e2bsec.E2B, o Options) (Config, error) {
	apiURL, apiFrom := cfg.APIURL, "e2b.api_url"
	if apiURL == "" {
		apiURL, apiFrom = o.Getenv("E2B_API_URL"), "E2B_API_URL"
	}
	// The key goes to the API, each sandbox's access token to the sandbox URL: never over plain
	// http off this machine (the policy's api_url is refused at load for the same; the
	// variables are read only here).
	for _, u := range []struct{ from, url string }{{apiFrom, apiURL}, {"E2B_SANDBOX_URL", o.Getenv("E2B_SANDBOX_URL")}} {
		if u.url == "" {
			continue
		}
		if why := e2bsec.URLProblem(u.url); why != "" {
			return Config{}, fmt.Errorf("%s = %q %s: use https:// (plain http only to a loopback host: 127.0.0.1, ::1, localhost), or unset it for https://api.e2b.app", u.from, u.url, why)
		}
	}
	return Config{APIKey: o.Getenv(cfg.APIKeyEnv), KeyEnv: cfg.APIKeyEnv, APIURL: apiURL, SandboxURL: o.Getenv("E2B_SANDBOX_URL"),
		Domain: o.Getenv("E2B_DOMAIN"), HTTP: o.HTTP, Retries: o.Retries, Backoff: o.Backoff, RequestTimeout: o.RequestTimeout}, nil
}

// Probe asks E2B's API what serve asks at its start (this host's serves' sandboxes, to sweep the
// dead ones'), with the key and the addresses serve would take from p and the environment: a
// list, which makes no sandbox and costs nothing. It returns the API's address and the answer's
// error: ErrUnauthorized for a refused key, ErrUnreachable for no answer (verify's host row,
// trial37 F7: verify said PASS for an API it never asked).
func Probe(ctx context.Context, p *policy.Policy, o Options) (string, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	cfg := *e2bsec.Of(p)
	if cfg.APIKeyEnv == "" {
		cfg.APIKeyEnv = "E2B_API_KEY"
	}
	cc, err := clientConfig(cfg, o)
	if err != nil {
		return cfg.APIURL, err
	}
	c := NewClient(cc)
	if cc.APIKey == "" {
		return c.APIURL(), fmt.Errorf("the E2B API key variable $%s is empty or unset", cfg.APIKeyEnv)
	}
	host, _ := os.Hostname()
	return c.APIURL(), c.List(ctx, map[string]string{LabelOwner: "1", LabelHost: host}, func(Info) {})
}

// Instance is the label this serve puts on its sandboxes.
func (e *Executor) Instance() string { return e.instance }

// Reaped is closed once the start-up sweep of dead instances' sandboxes is over.
func (e *Executor) Reaped() <-chan struct{} { return e.reaped }

// reap kills sandboxes made by serve processes of this machine that are surely no longer alive
// (crashed, SIGKILLed): listed by metadata, judged by machine id, boot id, pid namespace, pid and
// process start time (judge); one this serve cannot judge is left to its leash.
func (e *Executor) reap() {
	defer close(e.reaped)
	ctx, cancel := context.WithTimeout(e.ctx, reapTimeout)
	defer cancel()
	// What is to be killed is gathered first (the list's pages are not held) and killed after.
	type dead struct{ id, instance string }
	var doomed []dead
	unasked, over := 0, 0
	err := e.client.List(ctx, map[string]string{LabelOwner: "1", LabelHost: e.host}, func(s Info) {
		// The API was asked for these labels only, but one that ignores the filter (another
		// version of the protocol, a proxy dropping the query) lists every sandbox of the team:
		// what this host's serves did not label is not ours to kill.
		if (s.Metadata[LabelOwner] != "1" || s.Metadata[LabelHost] != e.host) && !mutated("atk19b-e2b-reap-labels") {
			unasked++
			return
		}
		if s.Metadata[LabelInstance] == e.instance {
			return
		}
		if e.judge(s.Metadata) != procid.Dead {
			return // another serve still owns it, or one this serve cannot judge (another machine of this name, pid namespace)
		}
		if len(doomed) >= maxReap {
			over++
			return
		}
		doomed = append(doomed, dead{s.ID, s.Metadata[LabelInstance]})
	})
	if unasked > 0 {
		e.log.Warn("e2b: the API's list of sandboxes ignored its metadata filter; the start-up sweep left alone the sandboxes this host's serves did not label",
			"api", e.client.APIURL(), "left_alone", unasked)
	}
	if over > 0 {
		e.log.Warn("e2b: more sandboxes of dead serves than one start-up sweep kills; the next serve's sweep kills more (each ends at its lifetime anyway)",
			"killing", maxReap, "left", over)
	}
	if err != nil {
		e.log.Warn("e2b: could not list sandboxes left by earlier serve processes", "err", e.client.clean(err.Error()))
	}
	for _, s := range doomed {
		if ctx.Err() != nil {
			return
		}
		if err := e.client.Kill(ctx, s.id); err != nil {
			e.log.Warn("e2b: could not kill a sandbox left by a dead serve", "sandbox", s.id, "err", e.client.clean(err.Error()))
			continue
		}
		e.log.Info("e2b: killed a sandbox left by a dead serve", "sandbox", s.id, "instance", s.instance)
	}
}

// judge says whether the serve whose labels l carries is alive, seen from this one: dead only
// when sure (procid.Judge: this machine, and another boot or this pid namespace without it).
func (e *Executor) judge(l map[string]string) procid.Liveness {
	pid, err1 := strconv.Atoi(l[LabelPID])
	start, err2 := strconv.ParseUint(l[LabelStart], 10, 64)
	if err1 != nil || err2 != nil {
		return procid.Unknown
	}
	o := procid.Instance{Host: l[LabelHost], Machine: l[LabelMachine], Boot: l[LabelBoot], PIDNS: l[LabelPIDNS], PID: pid, Start: start}
	if mutated("e2b-reap-by-pid-alone") {
		o.Machine, o.Boot, o.PIDNS = e.me.Machine, e.me.Boot, e.me.PIDNS
	} else if o.Machine == "" {
		// the team's key is shared by machines of one host name: without a machine id (an older
		// serve's label, a machine without one) nothing says the serve was this machine's
		return procid.Unknown
	}
	return e.me.Judge(o)
}

// maxReap bounds the sandboxes one start-up sweep kills (and holds the ids of).
const maxReap = 1000

// reapTimeout bounds the start-up sweep (listing and killing); a variable for the test that
// lists a hostile API's 128 MiB of pages, which takes longer under -race on a loaded machine.
var reapTimeout = 30 * time.Second

// Ready reports a missing key; nothing else needs to wait.
func (e *Executor) Ready() error { return e.keyErr }

// Reachable is asked by serve before it says it is serving: without the key no call can run,
// and a serve that logged "serving" and connected the client's session before ending for it read
// as a good start in the client's log (trial37 F14, as trial35 F7 for docker's engine).
func (e *Executor) Reachable(context.Context) error {
	if mutated("serve-e2b-key-unchecked") {
		return nil
	}
	return e.keyErr
}

// Layers says what isolates a call: E2B's microVM (its promise, not checked here) and what
// this proxy enforces itself.
func (e *Executor) Layers() []executor.Layer {
	under := "an undertaker process (started with serve, in its own session) holds a pipe from serve and kills serve's sandboxes the moment serve dies, even by SIGKILL"
	switch {
	case e.keyErr != nil:
		// not started without the key (nor is serve): the layers say what the policy gets once it is set
		under = "an undertaker process (started with serve, in its own session; none here yet: $" + e.cfg.APIKeyEnv + " is empty) holds a pipe from serve and kills serve's sandboxes the moment serve dies, even by SIGKILL"
	case e.under == nil:
		under = "no undertaker process is running (it could not start)"
	}
	life := fmt.Sprintf("reuse=call: a fresh sandbox per call, killed when the call ends; %s; each sandbox lives at E2B %s at a time, extended while its call runs (at most the call's timeout + %s), so a serve killed with its undertaker leaves it no longer", under, e.leash, callGrace)
	if e.cfg.Reuse == "session" {
		life = fmt.Sprintf("reuse=session: one sandbox per MCP session, killed when the session ends, on shutdown, or after e2b.sandbox_timeout (%s); %s; kept alive at E2B %s at a time, so a serve killed with its undertaker leaves it no longer", e.cfg.SandboxTimeout, under, e.leash)
	}
	net := "allow_internet_access=false sent at create: E2B blocks the sandbox's internet"
	if e.cfg.AllowInternet {
		net = "e2b.allow_internet = true: sandboxes reach the internet"
	}
	return []executor.Layer{
		{Name: LayerMicroVM, Active: true, Detail: fmt.Sprintf("each sandbox is an E2B microVM (template %q) at %s: isolation delegated to E2B, not verifiable from this host", e.cfg.Template, e.client.APIURL())},
		{Name: LayerLifecycle, Active: true, Detail: life},
		{Name: LayerNoInternet, Active: !e.cfg.AllowInternet, Detail: net},
		{Name: LayerKeyStaysHome, Active: true, Detail: fmt.Sprintf("the key in $%s is sent only to the control plane: never as a sandbox variable, in a result or a log line", e.cfg.APIKeyEnv)},
	}
}

// Tools are run_code (the name and shape of E2B's own MCP server) and run_command.
func (e *Executor) Tools() []executor.Tool {
	life := "Each call runs in a fresh sandbox that is killed afterwards."
	if e.cfg.Reuse == "session" {
		life = fmt.Sprintf("Calls of one session share a sandbox (files and variables persist) for up to %s; a call that times out loses it.", e.cfg.SandboxTimeout)
	}
	return append([]executor.Tool{
		{
			Name:  "run_code",
			Title: "Run code in an E2B sandbox",
			Description: "Run python code in a secure sandbox by E2B (other languages with `language`, e.g. \"bash\", \"js\"). " +
				"Prints and the value of the last expression are returned; an exception is returned as an error with its name, value and traceback. " + life,
			InputSchema: executor.InputSchema[codeArgs](nil),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: boolPtr(e.cfg.AllowInternet)},
			Run:         e.runCode,
		},
		{
			Name:        "run_command",
			Title:       "Run a shell command in an E2B sandbox",
			Description: "Run a shell command (bash -l -c) in a secure sandbox by E2B and return its exit code, stdout and stderr. " + life,
			InputSchema: executor.InputSchema[commandArgs](nil),
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: boolPtr(e.cfg.AllowInternet)},
			Run:         e.runCommand,
		},
	}, e.fileTools()...)
}

func boolPtr(b bool) *bool { return &b }

// codeArgs and commandArgs are the tools' arguments (their input schemas are derived from them).
type codeArgs struct {
	Code     string `json:"code" jsonschema:"the code to run"`
	Language string `json:"language,omitempty" jsonschema:"language of the code; default python"`
}

type commandArgs struct {
	Command string `json:"command" jsonschema:"the shell command"`
}

var languageRe = lazy.Regexp(`^[A-Za-z0-9_+.-]{0,32}$`)

func (e *Executor) runCode(ctx context.Context, c executor.Call) (*executor.Result, error) {
	var a struct {
		Code     string `json:"code"`
		Language string `json:"language"`
	}
	if err := executor.DecodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Code) == "" {
		return nil, executor.Refuse("tool.arguments", "code is empty")
	}
	if !languageRe().MatchString(a.Language) {
		return nil, executor.Refuse("tool.arguments", "language %q is not a language name", a.Language)
	}
	var ex *Execution
	res, err := e.call(ctx, c, func(ctx context.Context, sb *Sandbox, out, errb *executor.CapBuffer) (*executor.Result, error) {
		var err error
		ex, err = e.client.RunCode(ctx, sb, a.Code, a.Language, out, errb, c.MaxOutput)
		if err != nil {
			return nil, err
		}
		for _, r := range ex.Results {
			out.Write([]byte(r))
			if !strings.HasSuffix(r, "\n") {
				out.Write([]byte("\n"))
			}
		}
		r := &executor.Result{TimedOut: ex.TimedOut, Truncated: ex.Truncated, Images: ex.Images}
		if ex.TimedOut {
			r.ExitCode = 128 + 9
		} else if ex.Error != nil {
			r.ExitCode = 1
		}
		return r, nil
	})
	if err != nil || ex == nil || ex.Error == nil || res.TimedOut {
		return res, err
	}
	return nil, &CodeError{Name: e.redact(ex.Error.Name), Value: e.redact(ex.Error.Value), Traceback: e.redact(ex.Error.Traceback),
		Stdout: res.Stdout, Stderr: res.Stderr, Truncated: res.Truncated, Limit: c.MaxOutput, Images: res.Images}
}

// CodeError is an exception raised by run_code's code: a tool error carrying its name, value
// and traceback, plus what the code printed before.
type CodeError struct {
	Name, Value, Traceback string
	Stdout, Stderr         string
	Truncated              bool
	// Images are the pictures the code displayed before it raised.
	Images []executor.Image
	// Limit bounds Error()'s text (limits.max_output_bytes): it is the tool error's text and the
	// audit's reason. The exception comes first; stdout and stderr stay whole in ToolResult.
	Limit int
}

// ToolResult is what the code produced, for a serve that returns tool errors with structured
// content (the exit code is 1: the code raised).
func (e *CodeError) ToolResult() *executor.Result {
	return &executor.Result{ExitCode: 1, Stdout: e.Stdout, Stderr: e.Stderr, Truncated: e.Truncated, Images: e.Images}
}

func (e *CodeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the code raised %s: %s\n", e.Name, e.Value)
	if e.Traceback != "" {
		fmt.Fprintf(&b, "--- traceback ---\n%s", strings.TrimRight(e.Traceback, "\n")+"\n")
	}
	for _, s := range []struct{ name, text string }{{"stdout", e.Stdout}, {"stderr", e.Stderr}} {
		if s.text != "" {
			fmt.Fprintf(&b, "--- %s ---\n%s", s.name, strings.TrimRight(s.text, "\n")+"\n")
		}
	}
	if e.Truncated {
		b.WriteString("[output truncated (limits.max_output_bytes)]\n")
	}
	s := b.String()
	if e.Limit > 0 && !mutated("e2b-exception-cap") {
		// Every part was redacted before: the cut cannot leave part of the key.
		if t, cut := clip(s, e.Limit); cut {
			s = t + "\n[error text cut at limits.max_output_bytes; stdout and stderr are whole in the structured result]\n"
		}
	}
	return s
}

func (e *Executor) runCommand(ctx context.Context, c executor.Call) (*executor.Result, error) {
	var a struct {
		Command string `json:"command"`
	}
	if err := executor.DecodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	if strings.TrimSpace(a.Command) == "" {
		return nil, executor.Refuse("tool.arguments", "command is empty")
	}
	return e.call(ctx, c, func(ctx context.Context, sb *Sandbox, out, errb *executor.CapBuffer) (*executor.Result, error) {
		r, err := e.client.RunCommand(ctx, sb, a.Command, out, errb)
		if err != nil {
			return nil, err
		}
		res := &executor.Result{ExitCode: r.ExitCode, TimedOut: r.TimedOut}
		if r.TimedOut {
			res.ExitCode = 128 + 9
		}
		return res, nil
	})
}

type runFunc func(ctx context.Context, sb *Sandbox, out, errb *executor.CapBuffer) (*executor.Result, error)

// call gets the call's sandbox, runs f in it and applies the lifecycle: reuse=call kills the
// sandbox whatever happened; reuse=session keeps it unless the call broke it (timeout, cancel,
// an error), and recreates it once if it had expired before the call started.
func (e *Executor) call(ctx context.Context, c executor.Call, f runFunc) (*executor.Result, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errors.New("serve is shutting down")
	}
	e.inflight.Add(1)
	e.mu.Unlock()
	defer e.inflight.Done()
	if e.keyErr != nil {
		return nil, e.keyErr
	}
	note := ""
	for attempt := 0; ; attempt++ {
		sb, n, err := e.acquire(ctx, c)
		if err != nil {
			return nil, e.redactErr(withNote(err, note))
		}
		if n != "" {
			note = n
		}
		out, errb := &executor.CapBuffer{Limit: c.MaxOutput}, &executor.CapBuffer{Limit: c.MaxOutput}
		res, err := f(ctx, sb, out, errb)
		broken := (err != nil || ctx.Err() != nil || (res != nil && res.TimedOut)) && !mutated("e2b-broken-kill")
		switch {
		case e.cfg.Reuse == "call" && !mutated("e2b-call-kill"):
			e.release(sb)
			e.drop(c.Session, sb)
		case broken:
			// The session gets a fresh sandbox from its next call on; this one (and whatever
			// the broken call left running in it) goes when the session's other calls are done.
			e.retire(c.Session, sb)
			e.release(sb)
		default:
			e.release(sb)
		}
		if err != nil {
			if errors.Is(err, ErrSandboxGone) && e.cfg.Reuse == "session" && attempt == 0 && ctx.Err() == nil {
				e.log.Info("e2b: the session's sandbox was gone; starting a new one", "sandbox", sb.ID)
				continue
			}
			return nil, e.redactErr(withNote(err, note))
		}
		res.Stdout, res.Stderr = e.redact(out.String()), e.redact(errb.String())
		if note != "" {
			res.Stderr = "[mcpsandbox: " + note + "]\n" + res.Stderr
		}
		res.Truncated = res.Truncated || out.Dropped() > 0 || errb.Dropped() > 0
		return res, nil
	}
}

// callGrace is how long a reuse = call sandbox may outlive its call's timeout: its lifetime at
// E2B, so a serve killed mid-call (SIGKILL, crash) leaves it running no longer than that.
const callGrace = 15 * time.Second

// withNote adds what the session's call must be told (its earlier sandbox was killed) to err.
func withNote(err error, note string) error {
	if note == "" {
		return err
	}
	return fmt.Errorf("%w\n[mcpsandbox: %s]", err, note)
}

// acquire returns the sandbox a call runs in, counted as one of its users (release ends the
// use), and what the call must be told about the session's earlier sandbox ("" = nothing).
func (e *Executor) acquire(ctx context.Context, c executor.Call) (*Sandbox, string, error) {
	sessionID := c.Session
	if e.cfg.Reuse == "call" {
		life := min(e.cfg.SandboxTimeout.Duration, c.Timeout+callGrace)
		leash := e.leash
		if mutated("e2b-call-leash") {
			leash = life
		}
		sb, err := e.create(ctx, min(life, leash))
		if err != nil {
			return nil, "", e.quotaErr(err)
		}
		if leash < life {
			var lctx context.Context
			lctx, sb.unleash = context.WithCancel(e.ctx)
			go e.keepalive(lctx, sb, time.Now().Add(life))
		}
		e.mu.Lock()
		e.users[sb]++
		e.mu.Unlock()
		return sb, "", nil
	}
	e.mu.Lock()
	s := e.sessions[sessionID]
	if s == nil {
		s = &session{}
		e.sessions[sessionID] = s
	}
	e.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	e.mu.Lock()
	if sb := s.sb; sb != nil {
		// Counted under the executor's mu, as evictIdle judges: a sandbox handed to a call is
		// never taken as idle.
		e.users[sb]++
		sb.used = time.Now()
		e.mu.Unlock()
		return sb, "", nil
	}
	note := s.note
	max := e.cfg.SessionCap()
	for tries := 0; e.placed >= max && !mutated("e2b-session-cap"); tries++ {
		placed := e.placed
		why := fmt.Sprintf("e2b.max_sessions = %d", max)
		if tries == 8 || !e.evictIdle(s, why) { // evictIdle releases e.mu
			if tries == 8 {
				e.mu.Unlock()
			}
			return nil, "", executor.Refuse("e2b.max_sessions", "%d sessions already have an E2B sandbox (e2b.max_sessions = %d), each running a call: "+
				"try again when one ends, or raise e2b.max_sessions (keeping it under your E2B plan's limit on sandboxes at once: Hobby 20, Pro 100)", placed, max)
		}
		e.mu.Lock()
	}
	e.placed++
	e.mu.Unlock()
	life := e.cfg.SandboxTimeout.Duration
	if mutated("e2b-sandbox-timeout") {
		life = 24 * time.Hour
	}
	sb, err := e.create(ctx, min(life, e.leash))
	if isQuota(err) && ctx.Err() == nil && !mutated("e2b-429-no-evict") {
		// E2B's own limit on the team's sandboxes at once is reached (by this serve's idle
		// sessions, or by sandboxes it does not count: another serve, a script, a smaller plan):
		// the least recently used idle session's sandbox gives way, once.
		e.mu.Lock()
		if e.evictIdle(s, "E2B refused a new sandbox (429: the E2B team's limit on sandboxes at once was reached)") {
			sb, err = e.create(ctx, min(life, e.leash))
		}
	}
	if err != nil {
		e.mu.Lock()
		e.placed--
		e.mu.Unlock()
		return nil, "", e.quotaErr(err)
	}
	end := time.Now().Add(life)
	e.mu.Lock()
	sb.placed = true // kill gives the place back
	if e.closed || e.sessions[sessionID] != s {
		// The session ended (or serve closed) while the sandbox was being created.
		e.mu.Unlock()
		e.kill(sb)
		return nil, "", errors.New("the MCP session ended")
	}
	s.sb, s.note = sb, ""
	e.users[sb]++
	sb.used = time.Now()
	s.timer = time.AfterFunc(life, func() {
		e.log.Info("e2b: the session's sandbox reached e2b.sandbox_timeout", "sandbox", sb.ID)
		e.drop(sessionID, sb)
	})
	var lctx context.Context
	lctx, s.leash = context.WithCancel(e.ctx)
	e.mu.Unlock()
	if e.leash < life {
		go e.keepalive(lctx, sb, end)
	}
	return sb, note, nil
}

// evictIdle makes room for another session's sandbox (under e2b.max_sessions, or after E2B
// refused a create with 429): the sandbox of the session whose last call began or ended longest
// ago, among those with no call running, is killed, and that session's next call runs in a
// fresh one and is told why; as the HTTP layer closes the least recently used idle session past
// limits.max_sessions, and docker.max_sessions does for containers. Sessions a client abandoned
// (an HTTP client that quit without a DELETE) otherwise held every sandbox E2B lets the team
// run until e2b.sandbox_timeout, and every other session's calls failed (attack round atk35,
// F6). Called with e.mu held, which it releases; false when no session other than self has an
// idle sandbox. The kill is waited for: E2B counts the sandbox until it is gone.
func (e *Executor) evictIdle(self *session, why string) bool {
	var victim *session
	for _, o := range e.sessions {
		if o != self && o.sb != nil && e.users[o.sb] == 0 && (victim == nil || o.sb.used.Before(victim.sb.used)) {
			victim = o
		}
	}
	if victim == nil || mutated("e2b-session-no-evict") {
		e.mu.Unlock()
		return false
	}
	sb := victim.sb
	victim.sb = nil
	victim.stop()
	idle := time.Since(sb.used).Round(time.Second)
	victim.note = fmt.Sprintf("this session's E2B sandbox was killed after %s without a call, to make room for another session's (%s); "+
		"this call runs in a fresh one: variables and files of earlier calls are gone", idle, why)
	e.mu.Unlock()
	e.log.Info("e2b: killing the least recently used idle session's sandbox for another session", "sandbox", sb.ID, "idle", idle, "why", why)
	e.kill(sb)
	return true
}

// isQuota says err is E2B's 429 to a create: the team's limit on sandboxes at once (or its
// request rate) reached.
func isQuota(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusTooManyRequests
}

// quotaErr says a 429 to a create plainly, with what this serve holds: its advice depends on
// whether serve's own calls hold the sandboxes (lowering limits.max_concurrent helps only then).
func (e *Executor) quotaErr(err error) error {
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusTooManyRequests {
		return err
	}
	e.mu.Lock()
	held, busy := len(e.live), 0
	for _, sb := range e.live {
		if e.users[sb] > 0 {
			busy++
		}
	}
	e.mu.Unlock()
	return &QuotaError{api: ae, Held: held, Busy: busy, Session: e.cfg.Reuse == "session"}
}

// QuotaError is E2B's 429 to a create, said with what this serve holds.
type QuotaError struct {
	api        *APIError
	Held, Busy int  // sandboxes this serve holds, and those of them running a call
	Session    bool // reuse = "session": idle ones were offered first (none was idle)
}

func (q *QuotaError) Unwrap() error { return q.api }

func (q *QuotaError) Error() string {
	s := fmt.Sprintf("E2B refused to create a sandbox: the E2B team's limit on sandboxes running at once (or its rate of requests) is reached (429: %s; %d attempts)", q.api.Message, q.api.tries)
	switch {
	case q.Held == 0:
		return s + "; this serve holds no sandbox, so the quota is taken outside it (another serve, a script, the E2B dashboard): kill the sandboxes you do not use (https://e2b.dev/dashboard), or wait for them to end"
	case q.Busy == q.Held:
		keys := "limits.max_concurrent"
		if q.Session {
			keys += " or e2b.max_sessions"
		}
		return s + fmt.Sprintf("; every sandbox this serve holds (%d) is running a call, and the rest of the team's quota is taken elsewhere: try again when a call ends; to keep this serve under E2B's limit, lower %s", q.Held, keys)
	}
	return s + fmt.Sprintf("; this serve holds %d sandboxes (%d running a call), and the rest of the team's quota is taken elsewhere (another serve, a script): try again shortly, or kill the sandboxes you do not use (https://e2b.dev/dashboard)", q.Held, q.Busy)
}

// keepalive extends a session sandbox's lifetime at E2B a leash at a time, never past end
// (e2b.sandbox_timeout): if serve dies, the sandbox follows within a leash.
func (e *Executor) keepalive(ctx context.Context, sb *Sandbox, end time.Time) {
	t := time.NewTicker(e.leash / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ext := min(time.Until(end), e.leash)
		if ext < time.Second {
			return // E2B ends it at end, and so does the local timer
		}
		rctx, cancel := context.WithTimeout(ctx, e.leash/3)
		err := e.client.SetTimeout(rctx, sb.ID, ext)
		cancel()
		if errors.Is(err, ErrSandboxGone) {
			return
		}
		if err != nil && ctx.Err() == nil {
			e.log.Warn("e2b: could not extend the session's sandbox", "sandbox", sb.ID, "err", e.client.redactErrText(err.Error()))
		}
	}
}

func (e *Executor) create(ctx context.Context, ttl time.Duration) (*Sandbox, error) {
	// A client's cancel must not abort the create request half-way: E2B may finish a sandbox
	// whose id never reached us, and nobody would kill it (the HTTP load test saw one left). The
	// create runs to its end, and a sandbox made for a call that is gone is killed at once. The
	// call's deadline does bound it (the call's timeout covers the control plane too): a
	// sandbox E2B makes after that is one we never hear of, and it dies at its lifetime, a
	// leash at most (ttl), or at the next serve's start-up sweep.
	base := context.WithoutCancel(ctx)
	cctx, cancel := context.WithTimeout(base, createTimeout)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok && !mutated("e2b-create-deadline") {
		var c2 context.CancelFunc
		cctx, c2 = context.WithDeadline(cctx, dl)
		defer c2()
	}
	sb, err := e.client.Create(cctx, CreateOptions{Template: e.cfg.Template, Timeout: ttl,
		Metadata: e.labels, AllowInternet: e.cfg.AllowInternet})
	if err != nil {
		var slow *SlowAPIError
		if ctx.Err() != nil && !errors.As(err, &slow) {
			return nil, ctx.Err()
		}
		return nil, err
	}
	e.mu.Lock()
	// An answer naming a sandbox serve already holds (a broken or hostile API, or a proxy in
	// front of it replaying answers) would hand one session another's sandbox, its files and
	// variables, and its end would kill the other's: refused, and the other is left alone (not
	// killed: it is not this call's).
	if _, dup := e.live[sb.ID]; dup && !mutated("atk19b-e2b-dup-id") {
		e.mu.Unlock()
		return nil, fmt.Errorf("E2B's API at %s answered the create with sandbox %s, which serve already uses for another call or session: "+
			"refusing to share it; is e2b.api_url (or E2B_API_URL) E2B's API, or a proxy that replays answers?", e.client.APIURL(), e.client.clean(sb.ID))
	}
	closed := e.closed
	if !closed {
		e.live[sb.ID] = sb
	}
	e.mu.Unlock()
	e.under.add(sb.ID)
	if closed {
		e.kill(sb)
		return nil, errors.New("serve is shutting down")
	}
	if ctx.Err() != nil {
		e.kill(sb)
		return nil, ctx.Err()
	}
	return sb, nil
}

// createTimeout bounds one sandbox creation, retries included, whatever the call's context.
const createTimeout = 60 * time.Second

// drop forgets sb (from its session too) and kills it.
func (e *Executor) drop(sessionID string, sb *Sandbox) {
	e.mu.Lock()
	if s := e.sessions[sessionID]; s != nil && s.sb == sb {
		s.sb = nil
		s.stop()
	}
	e.mu.Unlock()
	e.killSoon(sb)
}

// killWait is how long a call's answer waits for its sandbox's kill: a control plane slow to
// answer the kill does not hold the call past its timeout; the kill goes on in the background
// (bounded by killTimeout) and Close waits for it.
const killWait = 2 * time.Second

// killSoon kills sb, waiting for the kill at most killWait.
func (e *Executor) killSoon(sb *Sandbox) {
	done := make(chan struct{})
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		defer close(done)
		e.kill(sb)
	}()
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// retire detaches sb from its session and marks it to be killed when its last call ends.
func (e *Executor) retire(sessionID string, sb *Sandbox) {
	e.mu.Lock()
	if s := e.sessions[sessionID]; s != nil && s.sb == sb {
		s.sb = nil
		s.stop()
	}
	e.retired[sb] = true
	e.mu.Unlock()
}

// release ends one call's use of sb; a retired sandbox is killed once nobody uses it.
func (e *Executor) release(sb *Sandbox) {
	e.mu.Lock()
	e.users[sb]--
	sb.used = time.Now()
	last := e.users[sb] <= 0
	if last {
		delete(e.users, sb)
	}
	doomed := last && e.retired[sb]
	e.mu.Unlock()
	if doomed {
		e.killSoon(sb)
	}
}

// kill kills sb with a deadline of its own (the call's may be over).
func (e *Executor) kill(sb *Sandbox) {
	e.mu.Lock()
	delete(e.live, sb.ID)
	delete(e.retired, sb)
	e.mu.Unlock()
	if sb.unleash != nil {
		sb.unleash()
	}
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	err := e.client.Kill(ctx, sb.ID)
	e.mu.Lock()
	if sb.placed { // its place under e2b.max_sessions is free once E2B has it killed
		sb.placed = false
		e.placed--
	}
	e.mu.Unlock()
	if err != nil {
		e.log.Warn("e2b: could not kill a sandbox; E2B ends it at its lifetime (a leash at most)", "sandbox", sb.ID, "leash", e.leash, "err", e.client.redactErrText(err.Error()))
		return
	}
	e.under.remove(sb.ID)
}

// EndSession kills the session's sandbox.
func (e *Executor) EndSession(id string) {
	if mutated("e2b-session-kill") {
		return
	}
	e.mu.Lock()
	s := e.sessions[id]
	delete(e.sessions, id)
	e.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock() // wait for a creation in progress
	e.mu.Lock()
	sb := s.sb
	s.sb = nil
	s.stop()
	e.mu.Unlock()
	s.mu.Unlock()
	if sb != nil {
		e.kill(sb)
	}
}

// Close kills every sandbox this serve holds, including those of calls still running.
func (e *Executor) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.cancel()
	var all []*Sandbox
	for _, sb := range e.live {
		all = append(all, sb)
	}
	for _, s := range e.sessions {
		s.stop()
	}
	e.sessions = map[string]*session{}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, sb := range all {
		wg.Add(1)
		go func() { defer wg.Done(); e.kill(sb) }()
	}
	wg.Wait()
	e.bg.Wait()
	<-e.reaped
	e.under.close()
	return nil
}

// redact removes the API key from output that leaves serve (a hostile upstream could echo it).
// The client already redacts each stream and value before it is capped; this is a second pass
// over the capped text.
func (e *Executor) redact(s string) string {
	return e.client.redactOut(s)
}

type redactedError struct {
	msg string
	err error
}

func (r *redactedError) Error() string { return r.msg }
func (r *redactedError) Unwrap() error { return r.err }

func (e *Executor) redactErr(err error) error {
	var ref *executor.Refusal
	if errors.As(err, &ref) {
		return err
	}
	if m := e.client.redactErrText(err.Error()); m != err.Error() {
		return &redactedError{msg: m, err: err}
	}
	return err
}
