package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is set by the command at build time.
var Version = "dev"

// OutputSchema is the JSON schema of Result, shared by every tool.
var OutputSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"exit_code":   map[string]any{"type": "integer", "description": "exit status; 128+N when killed by signal N"},
		"stdout":      map[string]any{"type": "string"},
		"stderr":      map[string]any{"type": "string"},
		"truncated":   map[string]any{"type": "boolean", "description": "output beyond limits.max_output_bytes per stream was dropped"},
		"timed_out":   map[string]any{"type": "boolean", "description": "the call hit limits.timeout and its whole process tree was killed"},
		"duration_ms": map[string]any{"type": "integer"},
	},
	"required": []string{"exit_code", "stdout", "stderr", "truncated", "timed_out", "duration_ms"},
}

// Options configure New.
type Options struct {
	Audit  *audit.Log // nil: no audit log
	Logger *slog.Logger
}

// New builds the MCP server for a policy and its executor.
func New(p *policy.Policy, ex Executor, o Options) *mcp.Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: p.Name, Title: "mcpsandbox (" + p.Scheme + ")", Version: Version},
		&mcp.ServerOptions{Logger: o.Logger, Instructions: instructions(p)})
	r := &runner{pol: p, hash: p.Hash(), audit: o.Audit, log: o.Logger,
		slots: make(chan struct{}, p.Limits.MaxConcurrent)}
	for _, t := range ex.Tools() {
		srv.AddTool(&mcp.Tool{
			Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, OutputSchema: OutputSchema, Annotations: t.Annotations,
		}, r.handler(t))
	}
	return srv
}

func instructions(p *policy.Policy) string {
	return fmt.Sprintf("Commands run in an mcpsandbox %q sandbox: %s wall clock and %s of output per stream at most. "+
		"A refused call says which policy rule refused it; do not retry it unchanged.", p.Scheme, p.Limits.Timeout, p.Limits.MaxOutputBytes)
}

type runner struct {
	pol   *policy.Policy
	hash  string
	audit *audit.Log
	log   *slog.Logger
	slots chan struct{}
}

func (r *runner) handler(t Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		args := req.Params.Arguments
		timeout := r.pol.Limits.Timeout.Duration
		res, err := r.run(ctx, t, args, timeout)
		entry := audit.Entry{Server: r.pol.Name, Tool: t.Name, Arguments: args, PolicyHash: r.hash,
			DurationMS: time.Since(start).Milliseconds()}
		var out *mcp.CallToolResult
		var ref *Refusal
		switch {
		case errors.As(err, &ref):
			entry.Decision, entry.Rule, entry.Reason = "refused", ref.Rule, ref.Reason
			out = errorResult(ref.Error())
		case err != nil && ctx.Err() != nil:
			entry.Decision, entry.Reason = "cancelled", err.Error()
			out = errorResult("cancelled by the client: the command's process tree was killed")
		case err != nil:
			entry.Decision, entry.Reason = "error", err.Error()
			out = errorResult("mcpsandbox could not run the call: " + err.Error())
		default:
			res.DurationMS = time.Since(start).Milliseconds()
			entry.Decision = "ran"
			entry.ExitCode = &res.ExitCode
			entry.Truncated, entry.TimedOut = res.Truncated, res.TimedOut
			out = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: Render(res, r.pol)}}, StructuredContent: res}
		}
		if r.audit != nil {
			if aerr := r.audit.Append(entry); aerr != nil {
				// A call that cannot be audited is not answered as if it had been.
				r.log.Error("audit log write failed", "err", aerr)
				return errorResult("the audit log could not be written (" + aerr.Error() + "); the call's result is withheld"), nil
			}
		}
		return out, nil
	}
}

func (r *runner) run(ctx context.Context, t Tool, args json.RawMessage, timeout time.Duration) (*Result, error) {
	// Wait for a slot no longer than the call itself may run.
	wait := time.NewTimer(timeout)
	defer wait.Stop()
	select {
	case r.slots <- struct{}{}:
	case <-wait.C:
		return nil, Refuse("limits.max_concurrent", "all %d slots stayed busy for %s; try again later", cap(r.slots), timeout)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.slots }()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := t.Run(cctx, Call{Args: args, Timeout: timeout, MaxOutput: int(r.pol.Limits.MaxOutputBytes)})
	if err == nil && ctx.Err() != nil {
		return nil, ctx.Err() // the client cancelled: not a timeout
	}
	return res, err
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// Render is the text form of a result, for clients that ignore structured content.
func Render(res *Result, p *policy.Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit_code: %d (%d ms)\n", res.ExitCode, res.DurationMS)
	if res.TimedOut {
		fmt.Fprintf(&b, "[timed out after %s: the whole process tree was killed]\n", p.Limits.Timeout)
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
	return b.String()
}
