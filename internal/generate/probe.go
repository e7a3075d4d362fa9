package generate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/visible"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Probe is what a started server entry answered.
type Probe struct {
	Tools   []string      // tools/list, in the server's order
	Elapsed time.Duration // start to tools/list answered, or to the proof call's answer
	Called  string        // the proof call's tool ("" = none was made)
	Env     string        // whose environment it ran with ("" = init's own)
}

// ProofCall is a trivial tool call that runs in the sandbox (a scheme's Proof): init makes it
// through the entry it writes, so an entry that starts but cannot run a call is never written.
type ProofCall struct {
	Tool string
	Args map[string]any
	// ExitZero: the call runs a program whose exit status must be 0 (a program that ran and
	// failed is not a tool error); Hint then says what its failure means and how to fix it.
	ExitZero bool
	Hint     string
	// Also are more calls, made after this one's (at most 4 at once), each judged as this one
	// is: the allowlist asks each of its commands, not only the first, whether it starts under
	// the policy's limits (trial37 F1: a Go binary second in the list could not start, and init
	// said it runs a call). Every failure is said, each in its call's words.
	Also []*ProofCall
	// Judge, when set, judges the call's answer, a tool error's included: a non-nil error
	// fails the check with its words (which command, why, the fix); nil passes it.
	Judge func(ProofResult) error
}

// ProofResult is a proof call's answer, for a ProofCall's Judge.
type ProofResult struct {
	ToolError string // the tool error's text ("" = the call ran)
	ExitCode  int
	Stdout    string
	Stderr    string
}

func (p *ProofCall) String() string {
	b, _ := json.Marshal(p.Args)
	return p.Tool + " " + string(b)
}

// StartError says why a server entry did not come up, with the end of what it wrote to stderr.
type StartError struct {
	Entry  ServerEntry
	Err    error
	Stderr string
	Run    ProofRun // whose environment it ran with
}

func (e *StartError) Error() string {
	var b strings.Builder
	what := "does not start"
	var pe *proofError
	if errors.As(e.Err, &pe) {
		what = "cannot run a call"
	}
	if e.Run.Who != "" {
		verb := "starts"
		if strings.Contains(e.Run.Who, " and ") { // several clients (englishList)
			verb = "start"
		}
		fmt.Fprintf(&b, "the server entry %s as %s %s it (with %s): %s: %s", what, e.Run.Who, verb, e.Run.How, e.Entry, errText(e.Err))
	} else {
		fmt.Fprintf(&b, "the server entry %s: %s: %s", what, e.Entry, errText(e.Err))
	}
	if e.Stderr != "" {
		// the server's own bytes, shown (shown.go)
		b.WriteString("\n  it said: " + strings.ReplaceAll(shown(e.Stderr, maxShownStderr), "\n", "\n  "))
	}
	return b.String()
}

func (e *StartError) Unwrap() error { return e.Err }

func (s ServerEntry) String() string {
	if s.URL != "" {
		if s.TokenEnv != "" {
			return shown(s.URL, maxShownEntry) + " (with Authorization: Bearer $" + shown(s.TokenEnv, maxShownEntry) + ")"
		}
		return shown(s.URL, maxShownEntry)
	}
	q := make([]string, 0, len(s.Args)+1)
	for _, a := range append([]string{s.Command}, s.Args...) {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$`") || visible.Text(a) != a {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q = append(q, a)
	}
	// a client's config, printed by init: its controls shown (shown.go)
	return shown(strings.Join(q, " "), maxShownEntry)
}

// errText is an error as StartError prints it: it may quote the server's answer (shown.go).
func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return shown(err.Error(), maxShownError)
}

// OriginEnv and OriginInitCheck mark the serve StartCheck starts: serve gives the calls of
// init's own client in it "origin":"init-check" in the audit (internal/serve: OriginEnv).
const (
	OriginEnv       = "MCPSANDBOX_ORIGIN"
	OriginInitCheck = "init-check"
)

// StartCheck runs the entry exactly as a client would (the same command and arguments, over
// stdio, with env: the environment that client gives it), completes the MCP initialize
// handshake and tools/list, makes the proof call when there is one (it must not be a tool
// error), then closes it. Any scheme: whatever keeps serve from running shows up here, in
// serve's own words.
func StartCheck(ctx context.Context, e ServerEntry, env []string, call *ProofCall, timeout time.Duration) (Probe, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, e.Command, e.Args...) // killed when the time is up
	cmd.Env = env
	if !mutated("init-portable-check-elsewhere") {
		cmd.Dir = e.Dir // a portable entry starts where its client opened the checkout
	}
	if !mutated("init-check-unmarked") {
		// its calls are init's own, and the audit says so (the last value of a variable wins)
		cmd.Env = append(slices.Clip(env), OriginEnv+"="+OriginInitCheck)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Probe{}, &StartError{Entry: e, Err: err}
	}
	cmd.Stderr = pw
	var (
		mu     sync.Mutex
		stderr tail
		read   = make(chan struct{})
	)
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			mu.Lock()
			stderr.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	fail := func(err error) (Probe, error) {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
		select { // what it said before it stopped (a grandchild may hold stderr open: do not wait long)
		case <-read:
		case <-time.After(2 * time.Second):
		}
		pr.Close()
		mu.Lock()
		defer mu.Unlock()
		var pe *proofError
		switch {
		case errors.As(err, &pe) && pe.tool:
		case errors.As(err, &pe) && (errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded)):
			err = fmt.Errorf("it answers MCP, but the tool call %s got no answer within %s", pe.call, timeout)
		case errors.As(err, &pe):
			err = fmt.Errorf("it answers MCP, but it stopped during the tool call %s (%v): every call would fail like this", pe.call, pe.err)
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
			err = fmt.Errorf("no MCP answer within %s", timeout)
		case errors.Is(err, io.EOF) || strings.Contains(err.Error(), "connection closed"):
			err = errors.New("it exited before answering MCP initialize")
		}
		return Probe{}, &StartError{Entry: e, Err: err, Stderr: stderr.String()}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpsandbox-init", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	pw.Close() // the child holds its own copy
	if err != nil {
		return fail(err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		cs.Close()
		return fail(fmt.Errorf("tools/list: %w", err))
	}
	p := Probe{}
	for _, t := range res.Tools {
		p.Tools = append(p.Tools, t.Name)
	}
	if call != nil && !mutated("init-proof-call") {
		if err := proofCall(ctx, cs, call); err != nil {
			cs.Close()
			return fail(err)
		}
		p.Called = call.Tool
	}
	p.Elapsed = time.Since(start)
	cs.Close()
	pr.Close()
	if len(p.Tools) == 0 {
		return Probe{}, &StartError{Entry: e, Err: errors.New("it started but offers no tools")}
	}
	return p, nil
}

// proofCall makes the call and its Also calls; every failure is returned, joined.
func proofCall(ctx context.Context, cs *mcp.ClientSession, call *ProofCall) error {
	calls := append([]*ProofCall{call}, call.Also...)
	if mutated("init-proof-first-only") {
		calls = calls[:1]
	}
	errs := make([]error, len(calls))
	slots := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = oneProofCall(ctx, cs, c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// oneProofCall makes one call; a transport error, a tool error, or what its Judge finds fails it,
// with the tool's words.
func oneProofCall(ctx context.Context, cs *mcp.ClientSession, call *ProofCall) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.Tool, Arguments: call.Args})
	if err != nil {
		return &proofError{call: call, err: err}
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				text = append(text, t.Text)
			}
		}
		msg := strings.TrimSpace(strings.Join(text, "\n"))
		if len(msg) > 2048 {
			msg = msg[:2048] + "…"
		}
		if call.Judge != nil {
			return judged(call, call.Judge(ProofResult{ToolError: msg}))
		}
		return &proofError{call: call, tool: true, err: fmt.Errorf("it answers MCP, but the tool call %s failed: %s", call, msg)}
	}
	if call.Judge != nil {
		var r struct {
			ExitCode int    `json:"exit_code"`
			Stdout   string `json:"stdout"`
			Stderr   string `json:"stderr"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
		if err := judged(call, call.Judge(ProofResult{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr})); err != nil {
			return err
		}
	}
	if call.ExitZero && !mutated("init-proof-exit") {
		var r struct {
			ExitCode *int   `json:"exit_code"`
			Stdout   string `json:"stdout"`
			Stderr   string `json:"stderr"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(b, &r) != nil || r.ExitCode == nil {
			return &proofError{call: call, tool: true, err: fmt.Errorf("it answers MCP, but the tool call %s returned no exit status", call)}
		}
		if *r.ExitCode != 0 {
			msg := strings.TrimSpace(r.Stderr + "\n" + r.Stdout)
			if len(msg) > 2048 {
				msg = msg[:2048] + "…"
			}
			return &proofError{call: call, tool: true, err: fmt.Errorf("it answers MCP, but the tool call %s exited %d: %s\n%s", call, *r.ExitCode, msg, call.Hint)}
		}
	}
	return nil
}

// judged is a Judge's verdict on call as the check's error (nil: it passed).
func judged(call *ProofCall, err error) error {
	if err == nil {
		return nil
	}
	return &proofError{call: call, tool: true, err: fmt.Errorf("it answers MCP, but the tool call %s: %w", call, err)}
}

// proofError: the proof call failed: the server's tool error (tool), or the transport's.
type proofError struct {
	call *ProofCall
	tool bool
	err  error
}

func (e *proofError) Error() string {
	if e.tool {
		return e.err.Error()
	}
	return fmt.Sprintf("the tool call %s: %v", e.call, e.err)
}

func (e *proofError) Unwrap() error { return e.err }

// tail keeps the last 2 KiB written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = append([]byte(nil), t.b[len(t.b)-2048:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(bytes.TrimSpace(t.b)) }
