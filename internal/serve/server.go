package serve

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is set by the command at build time.
var Version = "dev"

// OutputSchema is the JSON schema of Result, shared by every tool. It is inferred from the type
// itself, so the two cannot drift apart.
var OutputSchema = sync.OnceValue(func() *jsonschema.Schema {
	s, err := jsonschema.For[executor.Result](nil)
	if err != nil {
		panic("serve: executor.Result has no JSON schema: " + err.Error()) // a programming error
	}
	return s
})

// outputSchemaJSON is OutputSchema as served (outputschema.json, checked against the type by
// TestOutputSchemaFileMatchesResult; `go test ./internal/serve -run OutputSchemaFile -update` rewrites
// it): deriving it by reflection and encoding a *jsonschema.Schema for every tool of every
// tools/list answer took about 1 ms of serve's start.
//
//go:embed outputschema.json
var outputSchemaJSON []byte

// Options configure New and Run.
type Options struct {
	Audit  *audit.Log // nil: no audit log
	Logger *slog.Logger
	// Transport carries one persistent MCP connection; nil means newline-delimited JSON-RPC
	// on stdin/stdout (LineTransport).
	Transport mcp.Transport
	// HTTP, if set, serves streamable HTTP (many sessions) instead of one Transport.
	HTTP *HTTPOptions
	// Origin is OriginEnv's value as serve started (see stamp): "init-check" when init started
	// this serve to check the configuration it wrote.
	Origin string
}

// OriginEnv is the variable init sets for the serve it starts to check a configuration: that
// serve's calls are marked "origin":"init-check" in the audit (trial38 F2: init's --version
// calls read as the AI's). A client's config could set it too: the mark is given only to the
// calls of a session whose client is init's own (CheckClient), and it hides nothing (the line
// keeps every field, its client's name included).
const OriginEnv = "MCPSANDBOX_ORIGIN"

// CheckClient is the client name init's check connects with.
const CheckClient = "mcpsandbox-init"

// New builds the MCP server for a policy and its executor.
func New(p *policy.Policy, ex executor.Executor, o Options) *mcp.Server {
	srv, _ := newServer(p, ex, o)
	return srv
}

func newServer(p *policy.Policy, ex executor.Executor, o Options) (*mcp.Server, *runner) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: p.Name, Title: "mcpsandbox (" + p.Scheme + ")", Version: Version},
		&mcp.ServerOptions{Logger: o.Logger, Instructions: instructions(p)})
	r := &runner{pol: p, ex: ex, hash: sync.OnceValue(p.Hash), audit: o.Audit, log: o.Logger, origin: o.Origin,
		slots: newSlots(p.Limits.MaxConcurrent), sessions: &sessionTable{}, idle: newIdleReleaser(),
		unread: newUnread(unreadBounds()), policy: newPolicyWatch(p.File, o.Logger)}
	if a, ok := ex.(afterAnswerer); ok {
		r.afterCall = a.AfterAnswer
	}
	stop, stopAll := context.WithCancelCause(context.Background())
	r.stop, r.stopAll = stop, func(why string) { stopAll(errors.New(why)) }
	known := map[string]bool{}
	schemas := map[string]listedSchemas{}
	out := compactOutputSchema()
	for _, t := range ex.Tools() {
		known[t.Name] = true
		in, err := json.Marshal(t.InputSchema)
		if err != nil || len(in) == 0 || in[0] != '{' {
			// a programming error in a scheme: the SDK's own check panics the same way
			panic(fmt.Sprintf("serve: tool %s: input schema is not a JSON object: %v", t.Name, err))
		}
		schemas[t.Name] = listedSchemas{in: in, out: out}
		srv.AddTool(&mcp.Tool{
			Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: schemaStandIn, OutputSchema: schemaStandIn, Annotations: t.Annotations,
		}, r.handler(t))
	}
	srv.AddReceivingMiddleware(listSchemas(schemas))
	if !mutated("tool-name-unknown") {
		srv.AddReceivingMiddleware(r.unknownTool(known))
	}
	return srv, r
}

// The tools' schemas as served. The SDK checks a schema it is given by encoding and decoding it
// (AddTool), then encodes a map or a *jsonschema.Schema again in every tools/list answer: on the
// 2-CPU VMs measured, ~0.7 ms and ~0.5 ms of serve's start before its first answers. Serve gives
// the SDK a stand-in that passes its check at no cost (a raw tool handler never reads it: the
// SDK validates arguments only for typed handlers, and serve checks its own, shape.go) and answers
// tools/list with each tool's schemas encoded once, here (TestListedToolsCarryTheirSchemas).
var schemaStandIn = &jsonschema.Schema{Type: "object"}

type listedSchemas struct{ in, out json.RawMessage }

// compactOutputSchema is outputschema.json without its indentation (as answered).
var compactOutputSchema = sync.OnceValue(func() json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, outputSchemaJSON); err != nil {
		panic("serve: outputschema.json is not JSON: " + err.Error()) // TestOutputSchemaFileMatchesResult
	}
	return b.Bytes()
})

// listSchemas puts each tool's own schemas in place of the stand-ins in a tools/list answer
// (copies: the SDK's tools are left as they are).
func listSchemas(schemas map[string]listedSchemas) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			lr, ok := res.(*mcp.ListToolsResult)
			if method != "tools/list" || err != nil || !ok || lr == nil {
				return res, err
			}
			answer := *lr
			answer.Tools = make([]*mcp.Tool, len(lr.Tools))
			for i, t := range lr.Tools {
				c := *t
				if s, ok := schemas[t.Name]; ok {
					c.InputSchema, c.OutputSchema = s.in, s.out
				}
				answer.Tools[i] = &c
			}
			return &answer, nil
		}
	}
}

// Bounds on a tools/call before anything decodes its arguments or echoes its name.
const (
	// MaxArgValues and MaxArgDepth bound the JSON shape of a call's arguments (rule
	// tool.arguments): a cheap scan refuses more values or deeper nesting before any decoding,
	// so a 12 MB message of four million "" cannot take hundreds of MB to decode.
	MaxArgValues = bounds.MaxArgValues
	MaxArgDepth  = bounds.MaxArgDepth
	// MaxEchoedName is how much of an unknown tool's name a refusal quotes.
	MaxEchoedName = bounds.MaxEchoedName
)

// Rules of calls refused before they reach a tool.
const (
	RuleToolName      = "tool.name"
	RuleToolArguments = "tool.arguments"
	// RuleUnreadAnswers: the client left MaxUnreadAnswers of earlier answers unread for as long
	// as the call may run.
	RuleUnreadAnswers = "serve.unread_answers"
	// RuleRequestGone: over HTTP, the POST that carried the call (and would carry its answer)
	// ended before the call got a slot: the call is not run.
	RuleRequestGone = "serve.request_gone"
	// RuleServeStart: serve's start-up checks (a docker policy's image, network, runtime; the
	// allowlist's layer probe) failed after the client had its tools: no call can run.
	RuleServeStart = "serve.start"
)

// unknownTool answers a tools/call naming a tool this server does not have: audited refused
// (rule tool.name; the audit clips the name), and answered with an error that quotes at most
// MaxEchoedName bytes of the name (the SDK's own error quotes the whole name).
func (r *runner) unknownTool(known map[string]bool) mcp.Middleware {
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if method != "tools/call" || !ok || call.Params == nil || known[call.Params.Name] {
				return next(ctx, method, req)
			}
			name := call.Params.Name
			session := ""
			if ss := call.Session; ss != nil {
				session = r.sessions.id(ss)
			}
			quoted := strconv.Quote(ClipText(strings.ToValidUTF8(name, "\uFFFD"), MaxEchoedName))
			if len(name) > MaxEchoedName {
				quoted += fmt.Sprintf(" (%d bytes)", len(name))
			}
			reason := fmt.Sprintf("unknown tool %s: this server's tools are %s", quoted, strings.Join(names, ", "))
			if r.audit != nil {
				e := audit.Entry{Server: r.pol.Name, Session: session, Call: newID(), Tool: name, PolicyHash: r.hash(),
					Decision: "refused", Rule: RuleToolName, Reason: reason, Arguments: r.loggable(call.Params.Arguments)}
				r.stamp(&e, call.Session)
				if err := r.audit.Append(e); err != nil {
					r.log.Error("audit log write failed", "audit", r.audit.Path(), "err", err)
				}
			}
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: reason}
		}
	}
}

// argsRefusal says why a call's raw arguments are refused before anything decodes them ("" =
// not): over the shape bound, or ambiguous keys (two keys equal under case folding, which
// the SDK's schema check and the tool's decoder could read as different values).
func argsRefusal(args json.RawMessage) string {
	if err := audit.CheckShape(args, MaxArgValues, MaxArgDepth); err != nil && !mutated("tool-args-shape") {
		return fmt.Sprintf("the arguments (%d bytes) are refused unread: %v (at most %d JSON values, %d levels deep)", len(args), err, MaxArgValues, MaxArgDepth)
	}
	if err := audit.CheckKeys(args); err != nil && !mutated("tool-args-keys") {
		return fmt.Sprintf("the arguments are refused unread (%s): %v", audit.RuleAmbiguousKeys, err)
	}
	return ""
}

// loggable is a call's raw arguments as the audit gets them: arguments over the shape bound
// are not handed over (the audit records only that they were refused).
func (r *runner) loggable(args json.RawMessage) json.RawMessage {
	if audit.CheckShape(args, MaxArgValues, MaxArgDepth) != nil {
		return nil
	}
	return args
}

// Run serves one persistent connection (stdio unless o.Transport says otherwise) until the
// client hangs up or ctx ends. The executor's start-up probe runs while the client
// initializes: calls wait for it (Executor.Ready), and if it fails Run serves on, every call
// refused with its error (rule serve.start). A client that simply closes its end is a clean stop.
func Run(ctx context.Context, p *policy.Policy, ex executor.Executor, o Options) error {
	if o.HTTP != nil {
		return runHTTP(ctx, p, ex, o)
	}
	srv, r := newServer(p, ex, o)
	defer r.idle.stop()
	t := o.Transport
	if t == nil {
		t = &LineTransport{}
	}
	if lt, ok := t.(*LineTransport); ok {
		c := *lt
		if c.OnOversize == nil {
			c.OnOversize = r.oversize
		}
		c.unread = r.unread
		if r.afterCall != nil { // the executor's after-work starts once the answer's line is out
			c.afterAnswer, r.afterCall = r.afterCall, nil
		}
		t = &c
	}
	t, listed := afterToolsList(srv, t)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() { // the policy's hash (for the audit) is work the first answers need not wait for
		select {
		case <-listed:
			r.hash()
		case <-ctx.Done():
		}
	}()
	go func() {
		if b, ok := ex.(interface{ Begin() }); ok { // deferred start-up: after the first answers
			wait := time.NewTimer(startDeferMax)
			defer wait.Stop()
			select {
			case <-listed:
			case <-wait.C:
			case <-ctx.Done():
				return
			}
			b.Begin()
		}
		r.whenReady(ctx, cancel)
	}()
	ss, err := srv.Connect(ctx, t, nil)
	if err != nil {
		return fmt.Errorf("start the MCP session: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case <-ctx.Done():
		r.stopAll("the call was killed at once: over stdio serve has no grace period") // running calls end now; Close waits for them
		ss.Close()
		<-done
		err = nil
	case err = <-done:
	}
	r.sessions.end(ex, ss)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("mcp session: %w", err)
	}
	return nil
}

// startDeferMax bounds how long Run holds an executor's deferred start-up (Begin; see
// scheme.ExecOptions.DeferStart) for a client that does not list the tools: it begins when
// tools/list is answered, at the first call (the executor's own Ready), or after this.
var startDeferMax = 100 * time.Millisecond

// afterToolsList returns the transport to serve and a channel closed once a tools/list answer
// is written (over a LineTransport: after its line is out; otherwise when its handler returns).
func afterToolsList(srv *mcp.Server, t mcp.Transport) (mcp.Transport, <-chan struct{}) {
	listed := make(chan struct{})
	var once sync.Once
	var done atomic.Bool // a tools/list handler has returned: its answer is the next written
	signal := func() { once.Do(func() { close(listed) }) }
	lt, line := t.(*LineTransport)
	if line {
		c := *lt
		prev := c.afterAnswer
		c.afterAnswer = func() {
			if prev != nil {
				prev()
			}
			if done.Load() {
				signal()
			}
		}
		t = &c
	}
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/list" {
				done.Store(true)
				if !line {
					signal()
				}
			}
			return res, err
		}
	})
	return t, listed
}

func instructions(p *policy.Policy) string {
	return fmt.Sprintf("Commands run in an mcpsandbox %q sandbox: %s wall clock and %s of output per stream at most. "+
		"A refused call says which policy rule refused it; do not retry it unchanged.", p.Scheme, p.Limits.Timeout, p.Limits.MaxOutputBytes)
}

type runner struct {
	pol *policy.Policy
	ex  executor.Executor
	// startErr is the executor's start-up error once it failed after the first answers (whenReady):
	// every call is refused with it (rule serve.start).
	startErr atomic.Pointer[error]
	// readyOnce asks the executor's Ready once (startUp), readyErr its answer
	readyOnce sync.Once
	readyErr  error
	// stop ends every running call: at shutdown, once the grace period is over, because the
	// SDK's session Close waits for running handlers instead of cancelling them.
	stop    context.Context
	stopAll func(why string) // why: how the calls still running were ended, for their audit
	hash    func() string    // the policy's, computed once, after the first answers (afterToolsList) or at the first audit entry
	audit   *audit.Log
	log     *slog.Logger
	slots   *slots
	unread  *unread // answers made and not yet written out to their stdio clients
	// sessions are this server's live sessions and their ids.
	sessions *sessionTable
	idle     *idleReleaser
	// posts are the HTTP POSTs being served (nil on stdio): a call whose POST is gone before
	// it gets a slot is not run.
	posts *posts
	// afterCall, if set, runs as a tool handler returns: the executor's AfterAnswer, where no
	// transport says when an answer is written (over a LineTransport the transport calls it).
	afterCall func()
	origin    string // Options.Origin
	// policy notices the policy file changed after serve read it (logged once)
	policy *policyWatch
}

// maxClientText bounds the client's name and version as the audit keeps them.
const maxClientText = 128

// stamp puts on an audit entry which client and set-up it is of (trial38 F2: a line could not
// say which AI ran a call, nor in which repository): the client's name and version from its
// initialize (its own text: invisibles shown escaped, bounded; the audit redacts and bounds it
// again), the policy file and the workspace directory, and init's origin mark (OriginEnv).
func (r *runner) stamp(e *audit.Entry, ss *mcp.ServerSession) {
	if mutated("audit-unstamped") {
		return
	}
	e.PolicyPath = r.pol.File
	e.WorkDir, _ = r.pol.WorkspaceMount()
	if ss == nil {
		return
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.ClientInfo == nil {
		return
	}
	ci := ip.ClientInfo
	e.Client = visible.Line(ClipText(strings.ToValidUTF8(strings.TrimSpace(ci.Name+" "+ci.Version), "\uFFFD"), maxClientText))
	if r.origin == audit.OriginInitCheck && (ci.Name == CheckClient || mutated("audit-origin-any-client")) {
		e.Origin = audit.OriginInitCheck
	}
}

// afterAnswerer is an executor with work its calls leave for after their answers: AfterAnswer
// says an answer is out (any call's; the executor bounds how long its work waits for one).
type afterAnswerer interface{ AfterAnswer() }

func (r *runner) handler(t executor.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (out *mcp.CallToolResult, _ error) {
		start := time.Now()
		endQuietStart()
		r.idle.busy()
		defer r.idle.busy()
		if r.afterCall != nil {
			defer r.afterCall()
		}
		defer r.policy.look() // as the handler returns: a stat at most once a second
		args := req.Params.Arguments
		timeout := r.pol.Limits.Timeout.Duration
		session := ""
		if ss := req.Session; ss != nil {
			st, first := r.sessions.track(ss)
			session = st.id
			if first {
				// However the session ends (client gone, HTTP DELETE or idle timeout), the
				// executor hears of it once.
				go func() { _ = ss.Wait(); r.sessions.end(r.ex, ss) }()
			}
		}
		if len(args) > 1<<20 {
			// A huge argument's buffers are garbage once the call is answered: hand the
			// memory back to the system rather than keep serve's RSS at its peak.
			defer func() { go debug.FreeOSMemory() }()
		}
		// Every answer this handler returns is counted as made, from the answer itself, in one
		// step with the end of the call's reservation (if it ran): a refusal's too, so that each
		// result the stdio writer counts exactly had its estimate owed (countAnswer).
		ac := r.answerCount(req)
		defer func() { ac.count(out) }()
		entry := audit.Entry{Server: r.pol.Name, Session: session, Call: newID(), Tool: t.Name, Arguments: args, PolicyHash: r.hash()}
		r.stamp(&entry, req.Session)
		rule, why := RuleToolArguments, argsRefusal(args)
		if se := r.startErr.Load(); se != nil && why == "" {
			rule, why = RuleServeStart, startRefusal(*se)
		}
		if why != "" {
			// Refused before anything decodes the arguments: the call does not run.
			entry.Decision, entry.Rule, entry.Reason = "refused", rule, why
			entry.DurationMS = time.Since(start).Milliseconds()
			if r.audit != nil {
				if aerr := r.audit.Append(entry); aerr != nil {
					r.log.Error("audit log write failed", "audit", r.audit.Path(), "err", aerr)
				}
			}
			return errorResult(executor.Refuse(rule, "%s", entry.Reason).Error()), nil
		}
		// No call runs unaudited: its intent is on record before it runs, or it does not run. It
		// is written once the call has its slot, not while it waits for one: the audit log's
		// reserve holds room for the outcomes of the calls whose started line it wrote, which
		// are then at most max_concurrent's (attack round atk33, F7: 700 calls parked waiting,
		// each with a started line, then cancelled on a full disk, took the room of a call that
		// ran). A call that ends waiting is audited by its one line, as a refused call is.
		var intentErr error
		begin := func() error {
			if r.audit == nil || mutated("audit-intent") {
				return nil
			}
			intent := entry
			intent.Decision = audit.DecisionStarted
			intentErr = r.audit.Append(intent)
			return intentErr
		}
		if mutated("audit-intent-waits") {
			if err := begin(); err != nil {
				return r.intentRefused(t, err), nil
			}
			begin = func() error { return nil }
		}
		res, rsv, err := r.run(executor.WithCallID(ctx, entry.Call), ac.gone, r.sessions.done(req.Session), t, args, timeout, session, ac.conn, begin)
		ac.rsv = rsv
		if intentErr != nil {
			return r.intentRefused(t, intentErr), nil
		}
		entry.DurationMS = time.Since(start).Milliseconds()
		out = r.outcome(ctx, t, start, res, err, &entry)
		// counted before the audit line is written (a slow disk holds no reservation); an answer
		// the audit's failure replaces is smaller than the one counted
		ac.count(out)
		if r.audit != nil {
			if aerr := r.audit.Append(entry); aerr != nil {
				// A call that cannot be audited is not answered as if it had been.
				r.log.Error("audit log write failed", "err", aerr)
				// It ran, though: say so, and what it applied (attack round atk31, F3).
				applied := ""
				if res != nil && res.Workspace != nil {
					applied = " It applied to the workspace: " + wslayer.Summary(res.Workspace) + "."
				}
				return errorResult("the audit log could not be written (" + aerr.Error() + "); the call's result is withheld. " +
					"The call ran: what it wrote may have reached the workspace." + applied), nil
			}
		}
		return out, nil
	}
}

// intentRefused is the answer to a call refused because its started line could not be written.
func (r *runner) intentRefused(t executor.Tool, aerr error) *mcp.CallToolResult {
	r.log.Error("audit log cannot be written: call refused without running it", "audit", r.audit.Path(), "tool", t.Name, "err", aerr)
	return errorResult(fmt.Sprintf("mcpsandbox refused to run the call: its audit log cannot be written (%v), and no call runs unaudited. "+
		"Make the policy's audit.path (%s) writable again (free space, fix its permissions, or move a damaged file aside): "+
		"the next call uses it again without a restart.", aerr, r.audit.Path()))
}

// outcome is the answer to a call that ran (or was refused by the executor) with res and err,
// and its audit entry's decision.
func (r *runner) outcome(ctx context.Context, t executor.Tool, start time.Time, res *executor.Result, err error, entry *audit.Entry) *mcp.CallToolResult {
	var out *mcp.CallToolResult
	var ref *executor.Refusal
	var te executor.ToolError
	switch {
	case errors.As(err, &ref):
		entry.Decision, entry.Rule, entry.Reason = "refused", ref.Rule, ref.Reason
		out = errorResult(ref.Error())
		if !mutated("refusal-unlogged") {
			// the client's MCP log is serve's stderr: the user reads there what the model was
			// told, and which rule of which policy file to change if it should run (trial35 F12)
			r.log.Info("call refused", "tool", t.Name, "rule", ref.Rule, "reason", ref.Reason, "policy", r.pol.File)
		}
	case errors.Is(err, errShutdown):
		entry.Decision, entry.Reason = "cancelled", "serve is shutting down: "+context.Cause(r.stop).Error()
		out = r.cancelled(t, start, res, entry, "cancelled: the server is shutting down")
	case err != nil && ctx.Err() != nil:
		entry.Decision, entry.Reason = "cancelled", err.Error()
		out = r.cancelled(t, start, res, entry, "cancelled by the client")
	case err != nil && r.stop.Err() != nil:
		entry.Decision, entry.Reason = "cancelled", "serve is shutting down"
		out = r.cancelled(t, start, res, entry, "cancelled: the server is shutting down")
	case errors.As(err, &te):
		// The program ran and failed in a way the tool reports (an exception): the client
		// gets the error's own words and the structured result, marked isError.
		res := te.ToolResult()
		res.DurationMS = time.Since(start).Milliseconds()
		entry.Decision, entry.Reason, entry.ExitCode = "ran", err.Error(), &res.ExitCode
		entry.Truncated, entry.TimedOut = res.Truncated, res.TimedOut
		text := ClipText(visible.Text(err.Error()), int(r.pol.Limits.MaxOutputBytes)+MaxErrorText)
		entry.Files, entry.Workspace = fileRecords(t.Name, res), workspaceRecord(res.Workspace)
		out = &mcp.CallToolResult{IsError: true, Content: append([]mcp.Content{&mcp.TextContent{Text: text}}, executor.ImageContents(res)...), StructuredContent: res}
	case err != nil && r.startFailed():
		// a call in flight when the start-up failed (it waited for it): refused as the calls
		// after it are, not an error naming no rule (atk47b F4)
		entry.Decision, entry.Rule, entry.Reason = "refused", RuleServeStart, startRefusal(r.startUp())
		out = errorResult(executor.Refuse(RuleServeStart, "%s", entry.Reason).Error())
	case err != nil:
		entry.Decision, entry.Reason = "error", err.Error()
		out = errorResult("mcpsandbox could not run the call: " + err.Error())
		// in serve's log too, as a refusal is: the reason (the Docker engine gone, a full disk)
		// is serve's to fix, not the call's (trial39 F2)
		r.log.Warn("call failed", "tool", t.Name, "err", err, "policy", r.pol.File)
	default:
		res.DurationMS = time.Since(start).Milliseconds()
		entry.Decision = "ran"
		entry.ExitCode = &res.ExitCode
		entry.Truncated, entry.TimedOut = res.Truncated, res.TimedOut
		entry.Files, entry.Workspace = fileRecords(t.Name, res), workspaceRecord(res.Workspace)
		// none of the program's writes reached the workspace (its quota, a full disk): whatever
		// its exit code says, the call did not do what was asked (trial39 F12). A call that timed
		// out says so already, as a result (its output and exit code are the client's to read).
		discarded := res.Workspace != nil && res.Workspace.Discarded != "" && !res.TimedOut && !mutated("workspace-discard-not-error")
		// nor when each change it made lost to another writer's (trial40 F11: exit 0, no isError)
		lost := res.Workspace.LostToConflict() && !mutated("workspace-conflict-not-error")
		out = &mcp.CallToolResult{IsError: discarded || lost, Content: append([]mcp.Content{&mcp.TextContent{Text: visible.Text(Render(res, r.pol))}}, executor.ImageContents(res)...), StructuredContent: res}
	}
	return out
}

// cancelled answers a call that was cancelled (what says by whom) and completes its audit
// entry with what the executor made of it, res (nil: nothing). A cancel does not undo writes
// already being applied: one that came once the command had ended and its layer was being
// committed (or under limits.on_interrupt = "commit") leaves them in the workspace, and the
// answer and the audit say so rather than read as if nothing landed.
func (r *runner) cancelled(t executor.Tool, start time.Time, res *executor.Result, entry *audit.Entry, what string) *mcp.CallToolResult {
	if res == nil || mutated("cancel-drops-result") {
		return errorResult(what + ": the call's process tree was killed")
	}
	res.DurationMS = time.Since(start).Milliseconds()
	entry.ExitCode, entry.Truncated, entry.TimedOut = &res.ExitCode, res.Truncated, res.TimedOut
	entry.Files, entry.Workspace = fileRecords(t.Name, res), workspaceRecord(res.Workspace)
	head := what + ": the call's process tree was killed; what it had done is below"
	if w := res.Workspace; w != nil && w.Discarded == "" {
		// The commit had begun (or on_interrupt = "commit"): it is never left half-done.
		entry.Reason += "; the call's writes were applied to the workspace all the same (the cancel came while they were being applied, or limits.on_interrupt = \"commit\")"
		head = what + ", too late to hold back the call's writes: they were being applied to the workspace " +
			"(or limits.on_interrupt = \"commit\"), and what was applied is below"
	}
	text := ClipText(visible.Text(head+"\n"+Render(res, r.pol)), int(r.pol.Limits.MaxOutputBytes)+MaxErrorText)
	return &mcp.CallToolResult{IsError: true, Content: append([]mcp.Content{&mcp.TextContent{Text: text}}, executor.ImageContents(res)...), StructuredContent: res}
}

// whenReady waits for the executor's start-up: ready, the commits it finished for a dead serve
// are put on record. A start-up that fails (the checks a docker policy's start makes after the
// first answers: its image, network, runtime) leaves serve serving, every call refused with its
// error, which serve's log also says: ending serve under a client that had just shown it
// connected left a call in flight with "Connection closed" and the reason only in the client's
// server log (trial46 F1). A start-up cut short because serve is ending (the client left before
// it finished: a one-shot client, claude mcp list, init's own check) is not a fault of the policy:
// it is said at INFO, not as the ERROR that every call is refused (trial49 F3).
func (r *runner) whenReady(ctx context.Context, cancel context.CancelCauseFunc) {
	if err := r.startUp(); err != nil {
		if mutated("serve-start-error-ends") {
			cancel(err)
			return
		}
		r.startErr.Store(&err)
		if ctx.Err() != nil && !mutated("serve-start-cut-as-error") {
			r.log.Info("serve's start-up checks did not finish: serve is ending (its client left)", "err", err)
			return
		}
		r.log.Error("serve cannot run a call on this policy here: serving on, every call is refused with this error; fix it, then restart this server from the client", "err", err)
		return
	}
	r.auditRecoveries()
}

// startUp is the executor's start-up's outcome, asked of it once (whenReady and a failed call
// share it): it blocks until the start-up ended.
func (r *runner) startUp() error {
	r.readyOnce.Do(func() { r.readyErr = r.ex.Ready() })
	return r.readyErr
}

// startFailed says whether the start-up failed. Asked of a call that failed: the executor's
// calls wait for its start-up, so it has ended, and whenReady may not have stored it yet.
func (r *runner) startFailed() bool {
	return !mutated("serve-start-inflight-unsaid") && r.startUp() != nil
}

// startRefusal is the text a call is refused with once the start-up failed with err.
func startRefusal(err error) string {
	return "serve cannot run a call on this policy here: " + err.Error() + " (fix it, then restart this server from the client)"
}

// auditRecoveries puts on record each commit a dead serve left that the executor finished at its
// start (executor.Recoverer): the writes of a call whose outcome never reached the log, now in
// the workspace. Without it the audit held that call's started line and nothing of what landed.
func (r *runner) auditRecoveries() {
	rc, ok := r.ex.(executor.Recoverer)
	if !ok || r.audit == nil || mutated("recovery-unaudited") {
		return
	}
	for _, rec := range rc.Recovered() {
		began := rec.Since.UTC().Format(time.RFC3339Nano)
		call := rec.Call // the dead call's: this line is its outcome
		if call == "" {
			call = newID()
		}
		e := audit.Entry{Server: r.pol.Name, Call: call, Tool: audit.RecoveryTool, Decision: audit.DecisionRecovered, PolicyHash: r.hash(),
			Reason: fmt.Sprintf("serve %d died while applying the writes of a call it began at %s (%s): "+
				"this serve finished applying them, each checked again", rec.PID, began, map[bool]string{true: "this line is its outcome", false: "its outcome line is missing"}[rec.Call != ""]),
			Workspace: workspaceRecord(rec.Changes)}
		r.stamp(&e, nil)
		if rec.Err != "" {
			e.Decision = "error"
			e.Reason = fmt.Sprintf("serve %d died while applying the writes of a call it began at %s: finishing them failed (%s); "+
				"tried again at the next start", rec.PID, began, rec.Err)
		}
		if err := r.audit.Append(e); err != nil {
			r.log.Error("audit log write failed", "audit", r.audit.Path(), "err", err)
		}
	}
}

// errRequestGone ends a call's wait for a slot when the HTTP POST that carried it is over;
// errSessionGone when its MCP session ended (an HTTP DELETE, idle expiry, stdio's end: atk34
// N1, a DELETEd session's queued call ran after it, its answer an empty 200).
var (
	errRequestGone = errors.New("the HTTP request carrying the call was closed")
	errSessionGone = errors.New("the MCP session of the call ended")
)

// goneWhy is the cause of a wait run ended for its POST or its session (nil if neither).
func goneWhy(wait context.Context) error {
	for _, e := range []error{errRequestGone, errSessionGone} {
		if errors.Is(context.Cause(wait), e) {
			return e
		}
	}
	return nil
}

// run waits for the call's turn and runs it. gone, if not nil, ends when the HTTP POST that
// carried the call is over, ended when its session ends: a call still waiting for a slot then is
// refused (RuleRequestGone)
// and never run, so calls whose connections were dropped hold neither a place in the queue
// nor their arguments (the connection bound and the body budget no longer count them).
//
// begin is called once the call has its slot, before it runs: its error (the started line not
// written) ends the call unrun, with that error. The call's reservation for its answer is
// returned (nil: it did not run): it counts until the answer is (countAnswer).
func (r *runner) run(ctx, gone, ended context.Context, t executor.Tool, args json.RawMessage, timeout time.Duration, session, conn string, begin func() error) (*executor.Result, *reservation, error) {
	// A client that does not read its answers gets no new call run for it: checked before the
	// slot (a stalled session does not hold one) and again with it (the answers of the calls
	// that held slots meanwhile are counted once they are being written).
	deadline := time.Now().Add(timeout)
	wait := ctx
	if gone != nil && !mutated("atk19a-http-abandoned-wait") || ended != nil {
		wctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		if gone != nil && !mutated("atk19a-http-abandoned-wait") {
			defer context.AfterFunc(gone, func() { cancel(errRequestGone) })()
		}
		if ended != nil { // a callback, not a goroutine per call: this is every call's path
			defer context.AfterFunc(ended, func() { cancel(errSessionGone) })()
		}
		wait = wctx
	}
	goneRefusal := func() error {
		if goneWhy(wait) == errSessionGone {
			return executor.Refuse(RuleRequestGone, "the call's MCP session ended (the client ended it, or it expired) before the call got a slot "+
				"(limits.max_concurrent): it was not run")
		}
		return executor.Refuse(RuleRequestGone, "the HTTP request that carried the call was closed before the call got a slot "+
			"(limits.max_concurrent): its answer could not be delivered, so it was not run; send it again and keep the request open for the answer")
	}
	var release func()
	var rsv *reservation
	bound := r.unread.answerBound(t.Name, int64(r.pol.Limits.MaxOutputBytes), int64(r.pol.Limits.MaxFileBytes))
	for {
		if wait.Err() != nil && ctx.Err() == nil && goneWhy(wait) != nil {
			return nil, nil, goneRefusal()
		}
		if err := r.unread.wait(wait, conn, time.Until(deadline)); err != nil {
			if ctx.Err() != nil {
				return nil, nil, err
			}
			if goneWhy(wait) != nil {
				return nil, nil, goneRefusal()
			}
			return nil, nil, executor.Refuse(RuleUnreadAnswers, "%v", err)
		}
		// Wait for a slot (fairly among sessions) no longer than the call itself may run.
		rel, err := r.slots.acquire(wait, session, time.Until(deadline))
		if err != nil {
			if ctx.Err() == nil && goneWhy(wait) != nil {
				return nil, nil, goneRefusal()
			}
			return nil, nil, err
		}
		if rs, ok := r.unread.reserve(conn, bound); ok {
			release, rsv = rel, rs
			break
		}
		rel()
	}
	defer release()
	if err := begin(); err != nil {
		rsv.End()
		return nil, nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stopped := context.AfterFunc(r.stop, cancel)
	res, err := t.Run(cctx, executor.Call{Args: args, Timeout: timeout, MaxOutput: int(r.pol.Limits.MaxOutputBytes), Session: session})
	var ref *executor.Refusal
	if !stopped() && !errors.As(err, &ref) && !mutated("shutdown-cancelled") {
		// Shutdown killed the call: whatever the executor made of that (exit 137), it did not
		// simply run.
		return res, rsv, errShutdown // res, if any: what reached the workspace meanwhile is reported
	}
	if err == nil && ctx.Err() != nil {
		return res, rsv, ctx.Err() // the client cancelled: not a timeout
	}
	return res, rsv, err
}

// answerCounter counts one call's answer once (count).
type answerCounter struct {
	u    *unread
	conn string          // the transport's session: what the stdio writer counts answers by
	gone context.Context // HTTP: ends when the POST that carried the call is over
	rsv  *reservation    // the call's, once it ran
	done bool
}

// answerCount is the counter of req's answer.
func (r *runner) answerCount(req *mcp.CallToolRequest) *answerCounter {
	ac := &answerCounter{u: r.unread}
	if req.Session != nil {
		ac.conn = req.Session.ID()
	}
	var header http.Header
	if req.Extra != nil {
		header = req.Extra.Header
	}
	ac.gone = r.posts.gone(header)
	return ac
}

// count counts the answer out, in one step with the end of the call's reservation: over HTTP
// until the request that carries it is over, over stdio as an estimate the connection replaces
// with the answer's exact size when it writes it (lineConn.Write). The slot is free by then; the
// reservation counted meanwhile. Once: later calls do nothing.
func (ac *answerCounter) count(out *mcp.CallToolResult) {
	if ac.done {
		return
	}
	ac.done = true
	n := answerSizeOf(out)
	if ac.gone != nil {
		ac.u.hold(ac.conn, n, ac.gone, ac.rsv)
		return
	}
	ac.u.owe(ac.conn, n, ac.rsv)
}

// workspaceRecord counts a call's workspace changes for its audit entry (nil: no layer), and
// names the applied ones, deletions first (the audit keeps the first few, counting the rest):
// what someone reviewing an agent's session reads (trial37 F8).
func workspaceRecord(w *executor.WorkspaceChanges) *audit.WorkspaceRecord {
	if w == nil || w.Committed == 0 && len(w.Refused) == 0 && w.Discarded == "" {
		return nil // nothing reached the workspace, nothing was held back
	}
	r := &audit.WorkspaceRecord{Committed: w.Committed, Bytes: w.Bytes, Refused: len(w.Refused) + w.RefusedMore,
		Restored: len(w.Restored) + w.RestoredMore, Discarded: w.Discarded != "", Deleted: w.Deleted, AppliedMore: w.AppliedMore}
	if !mutated("audit-refused-unnamed") {
		// which changes were refused, and why: the record a reviewer reads (trial38 F3)
		r.RefusedMore, r.Kept = w.RefusedMore, w.Kept
		for _, f := range w.Refused {
			r.RefusedChanges = append(r.RefusedChanges, audit.RefusedRecord{Path: f.Path, Why: f.Why})
		}
	}
	if mutated("audit-workspace-unnamed") {
		r.AppliedMore = 0
		return r
	}
	for _, a := range w.Applied {
		r.Applied = append(r.Applied, audit.AppliedRecord{Op: a.Op, Path: a.Path, Bytes: a.Bytes, SHA256: a.SHA256})
	}
	return r
}

// fileRecords are what the audit keeps of the files a call moved: the path, size and sha256 of
// a file written or read, and of each picture returned.
func fileRecords(tool string, res *executor.Result) []audit.FileRecord {
	var out []audit.FileRecord
	if f := res.File; f != nil {
		op := "read"
		if tool == executor.ToolWriteFile {
			op = "write"
		}
		rec := audit.FileRecord{Op: op, Path: f.Path, Bytes: f.Size, SHA256: f.SHA256}
		if n, part := readPart(f); part {
			rec.Bytes, rec.FileBytes = n, f.Size
		}
		out = append(out, rec)
	}
	for _, im := range res.Images {
		if im.Omitted == "" {
			out = append(out, audit.FileRecord{Op: "image", Path: im.Name, Bytes: im.Size, SHA256: im.SHA256})
		}
	}
	return out
}

// errShutdown is a call ended by serve's shutdown (runner.stop).
var errShutdown = errors.New("serve is shutting down")

// oversize hears of a stdio message discarded for its size: logged, and audited as a refused
// call when it was a tools/call (the call did not run).
func (r *runner) oversize(o Oversize) {
	rule, reason := RuleMaxMessage, fmt.Sprintf("the message was %d bytes, over the %d-byte limit of one stdio message: discarded unread, the call did not run", o.Size, o.Limit)
	if o.Why != "" {
		// refused unread for its form, not its size (attack round atk31, F1)
		rule, reason = RuleMessage, o.Why+": refused unread, the call did not run"
		r.log.Warn("refused a message unread", "why", o.Why, "bytes", o.Size, "method", o.Method, "id", string(o.ID), "session", o.Session)
	} else {
		r.log.Warn("discarded an over-long message", "bytes", o.Size, "limit", o.Limit, "method", o.Method, "id", string(o.ID), "session", o.Session)
	}
	if o.Method != "tools/call" || r.audit == nil {
		return
	}
	e := audit.Entry{Server: r.pol.Name, Session: o.Session, Call: newID(), Tool: o.Tool, PolicyHash: r.hash(),
		Decision: "refused", Rule: rule, Reason: reason,
		Clipped: []audit.Clip{{Field: "message", Bytes: o.Size, SHA256: o.SHA256}}}
	r.stamp(&e, nil)
	if err := r.audit.Append(e); err != nil {
		r.log.Error("audit log write failed", "audit", r.audit.Path(), "err", err)
	}
}

// RuleMaxMessage is the rule of a stdio message refused for its size (MaxLine).
const RuleMaxMessage = "stdio.max_message"

// RuleMessage is the rule of a stdio message refused unread for its form: not JSON, a batch,
// nested deeper than the judge reads.
const RuleMessage = "stdio.message"

// MaxErrorText bounds the text of a refused or failed call's result: a refusal may quote the
// argument it refused, and an argument can be megabytes.
const MaxErrorText = bounds.MaxErrorText

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: ClipText(visible.Text(msg), MaxErrorText)}}}
}

// ClipText cuts s to at most max bytes (on a UTF-8 boundary) and says how much was cut.
func ClipText(s string, max int) string {
	if len(s) <= max || mutated("result-text-clip") {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [mcpsandbox: %d more bytes of this message cut]", len(s)-cut)
}

// MaxLogValue bounds one value of a stderr log line (see internal/bounds).
const MaxLogValue = bounds.MaxLogValue

// ClipLogAttr is a slog ReplaceAttr that clips a value over MaxLogValue (a string, or anything
// that prints as one, such as an error quoting what a client sent), saying how much was cut.
func ClipLogAttr(_ []string, a slog.Attr) slog.Attr {
	if mutated("log-value-clip") {
		return a
	}
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); len(s) > MaxLogValue {
			a.Value = slog.StringValue(ClipText(s, MaxLogValue))
		}
	case slog.KindAny:
		if s := a.Value.String(); len(s) > MaxLogValue {
			a.Value = slog.StringValue(ClipText(s, MaxLogValue))
		}
	}
	return a
}

// Render is the text form of a result, for clients that ignore structured content.
func Render(res *executor.Result, p *policy.Policy) string {
	var b strings.Builder
	if res.File == nil && res.Entries == nil { // a file tool ran no program: no exit code to speak of
		fmt.Fprintf(&b, "exit_code: %d (%d ms)\n", res.ExitCode, res.DurationMS)
	}
	if res.TimedOut {
		limit := p.Limits.Timeout.Duration
		if res.Timeout > 0 && res.Timeout < limit {
			limit = res.Timeout
		}
		fmt.Fprintf(&b, "[timed out after %s: the whole process tree was killed]\n", limit)
	}
	for _, s := range []struct{ name, text string }{{"stdout", res.Stdout}, {"stderr", res.Stderr}} {
		if s.text == "" {
			continue
		}
		fmt.Fprintf(&b, "--- %s ---\n%s", s.name, s.text)
		if !strings.HasSuffix(s.text, "\n") {
			b.WriteByte('\n')
		}
	}
	if res.Truncated {
		fmt.Fprintf(&b, "[output truncated: only the first %s of each stream are kept (limits.max_output_bytes)]\n", p.Limits.MaxOutputBytes)
	}
	renderFiles(&b, res)
	if w := wslayer.Summary(res.Workspace); w != "" {
		fmt.Fprintf(&b, "[%s]\n", w)
	}
	for _, d := range res.EgressDenied {
		fmt.Fprintf(&b, "[%s]\n", d)
	}
	if res.EgressDeniedMore > 0 {
		fmt.Fprintf(&b, "[and %d more egress refusal(s): serve's audit log has each]\n", res.EgressDeniedMore)
	}
	return b.String()
}

// renderFiles is the text form of the file tools' results and of a call's pictures. Names come
// from whatever wrote the workspace (or an E2B sandbox's envd): each is printed by visible.Name,
// so one holding a newline cannot make lines that read as serve's (attack round atk36, F2).
func renderFiles(b *strings.Builder, res *executor.Result) {
	if f := res.File; f != nil {
		if n, part := readPart(f); part {
			fmt.Fprintf(b, "file: %s (%d bytes; the first %d read, sha256 of those %s)\n", visible.Name(f.Path), f.Size, n, f.SHA256)
		} else {
			fmt.Fprintf(b, "file: %s (%d bytes, sha256 %s)\n", visible.Name(f.Path), f.Size, f.SHA256)
		}
		switch {
		case f.Content != "":
			fmt.Fprintf(b, "--- content ---\n%s", f.Content)
			if !strings.HasSuffix(f.Content, "\n") {
				b.WriteByte('\n')
			}
		case f.ContentBase64 != "":
			fmt.Fprintf(b, "--- content (base64) ---\n%s\n", f.ContentBase64)
		}
		if f.Truncated {
			fmt.Fprintf(b, "[only the first bytes were read: the file is %d bytes]\n", f.Size)
		}
	}
	for _, e := range res.Entries {
		fmt.Fprintf(b, "%-5s %10d  %s\n", visible.Name(e.Type), e.Size, visible.Name(e.Name))
	}
	if res.EntriesMore > 0 {
		fmt.Fprintf(b, "[%d more entries not listed]\n", res.EntriesMore)
	}
	for _, im := range res.Images {
		if im.Omitted != "" {
			fmt.Fprintf(b, "[picture %s (%s, %d bytes): %s]\n", visible.Name(im.Name), visible.Name(im.MIMEType), im.Size, im.Omitted)
		} else {
			fmt.Fprintf(b, "[picture %s (%s, %d bytes) attached]\n", visible.Name(im.Name), visible.Name(im.MIMEType), im.Size)
		}
	}
}

// readPart is how many bytes a read_file that took only the file's first ones (max_bytes) read,
// which its sha256 is of; part is false for a whole file (or a write).
func readPart(f *executor.FileResult) (n int64, part bool) {
	if !f.Truncated || mutated("read-part-hash-unsaid") {
		return f.Size, false
	}
	if f.ContentBase64 != "" {
		return int64(base64.StdEncoding.DecodedLen(len(f.ContentBase64)) - strings.Count(f.ContentBase64[max(0, len(f.ContentBase64)-2):], "=")), true
	}
	return int64(len(f.Content)), true
}
