// Command mcpsandbox lets AI clients run commands through MCP without handing them the machine.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/serve/allowlist"
)

func main() {
	// The exec helper must run before anything else: it is the sandboxed command's first instant.
	if len(os.Args) > 1 && os.Args[1] == allowlist.HelperArg {
		allowlist.HelperMain()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	f := &Factory{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	root := NewCmdRoot(f)
	root.SetArgs(os.Args[1:])
	if err := root.ExecuteContext(ctx); err != nil {
		var ex *exitError
		if errors.As(err, &ex) {
			os.Exit(ex.code)
		}
		fmt.Fprintln(os.Stderr, "mcpsandbox:", err)
		os.Exit(1)
	}
}

// Factory carries the IO every command uses, so tests can run commands without a terminal.
type Factory struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// exitError exits with a code after the command has printed its own report.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }
