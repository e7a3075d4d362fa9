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

	"github.com/mcpsandbox/mcpsandbox/internal/mutant"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
)

func main() {
	// The exec helper runs in its package's initialisation (helper.init), before this; this is
	// the fallback where that did not happen.
	if len(os.Args) > 1 && os.Args[1] == helper.Arg {
		helper.Main()
	}
	mutant.Announce(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
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

// stopSignals end a command in order (its context cancelled: serve's sandboxes, verify's
// arenas removed). SIGHUP is the terminal closing or an ssh session dropping: left to its
// default it killed verify outright, leaving its harness directories with their canary
// .ssh/id_rsa in /var/tmp (trial36 F12).
func stopSignals() []os.Signal {
	if mutated("sighup-kills-outright") {
		return []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
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
