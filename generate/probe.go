package generate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Probe is what a started server entry answered.
type Probe struct {
	Tools   []string      // tools/list, in the server's order
	Elapsed time.Duration // start to tools/list answered
}

// StartError says why a server entry did not come up, with the end of what it wrote to stderr.
type StartError struct {
	Entry  ServerEntry
	Err    error
	Stderr string
}

func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the server entry does not start: %s: %v", e.Entry, e.Err)
	if e.Stderr != "" {
		b.WriteString("\n  it said: " + strings.ReplaceAll(e.Stderr, "\n", "\n  "))
	}
	return b.String()
}

func (e *StartError) Unwrap() error { return e.Err }

func (s ServerEntry) String() string {
	if s.URL != "" {
		if s.TokenEnv != "" {
			return s.URL + " (with Authorization: Bearer $" + s.TokenEnv + ")"
		}
		return s.URL
	}
	q := make([]string, 0, len(s.Args)+1)
	for _, a := range append([]string{s.Command}, s.Args...) {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$`") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q = append(q, a)
	}
	return strings.Join(q, " ")
}

// StartCheck runs the entry exactly as a client would (the same command and arguments, over
// stdio, with env), completes the MCP initialize handshake and tools/list, then closes it. Any
// scheme: whatever keeps serve from running shows up here, in serve's own words.
func StartCheck(ctx context.Context, e ServerEntry, env []string, timeout time.Duration) (Probe, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, e.Command, e.Args...) // killed when the time is up
	cmd.Env = env
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
		switch {
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
	p := Probe{Elapsed: time.Since(start)}
	for _, t := range res.Tools {
		p.Tools = append(p.Tools, t.Name)
	}
	cs.Close()
	pr.Close()
	if len(p.Tools) == 0 {
		return Probe{}, &StartError{Entry: e, Err: errors.New("it started but offers no tools")}
	}
	return p, nil
}

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
