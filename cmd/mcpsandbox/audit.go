package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/fsmode"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/spf13/cobra"
)

// NewCmdAudit builds `audit` and `audit verify`.
func NewCmdAudit(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit log", Example: "  mcpsandbox audit verify"}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check the audit log's hash chain; exits 1 if any line is edited, removed, inserted or not serve's",
		Long: "verify recomputes the chain and names every line it cannot account for: edited, inserted, after a\n" +
			"removed line, malformed, over-long, or appended by anything but mcpsandbox (serve chains over such a\n" +
			"line with a \"foreign\" marker entry and goes on). It prints the head hash: record it somewhere else,\n" +
			"and a later verify showing a different head for the same number of lines reveals a rewritten tail.",
		Example: "  mcpsandbox audit verify ~/.local/state/mcpsandbox/audit.jsonl",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			} else {
				var err error
				if path, err = audit.DefaultPath(); err != nil {
					return err
				}
			}
			// O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
			fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("open audit log: %w (serve creates it when it starts; give the path in the policy's [audit] path)", err)
			}
			if err != nil {
				return fmt.Errorf("open audit log: %w", err)
			}
			defer fh.Close()
			st, err := fh.Stat()
			if err != nil {
				return fmt.Errorf("stat audit log: %w", err)
			}
			if !st.Mode().IsRegular() && !mutated("verify-regular") {
				// A FIFO or a device has no end to reach: serve only ever writes a regular file.
				return fmt.Errorf("%s is %s, not a regular file: it is not an audit log serve wrote (serve refuses to log to anything else)", path, fsmode.Describe(st.Mode()))
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			rep, err := audit.Verify(&ctxReader{ctx: ctx, r: fh})
			if ctx.Err() != nil {
				return fmt.Errorf("audit verify of %s stopped after %d lines: %w", path, rep.Lines, context.Cause(ctx))
			}
			if err != nil && len(rep.Problems) == 0 {
				fmt.Fprintf(f.ErrOut, "%s: %v\n", path, err) // could not read it
				return &exitError{1}
			}
			if len(rep.Problems) > 0 {
				const show = 50
				for i, p := range rep.Problems {
					if i == show {
						fmt.Fprintf(f.ErrOut, "%s: TAMPERED: and %d more lines\n", path, len(rep.Problems)-show)
						break
					}
					fmt.Fprintf(f.ErrOut, "%s: TAMPERED: line %d: %s\n", path, p.Line, p.What)
				}
				fmt.Fprintf(f.ErrOut, "%s: %d of %d lines cannot be accounted for\n", path, len(rep.Problems), rep.Lines)
				return &exitError{1}
			}
			if rep.Lines == 0 {
				// Nothing to check is not a verdict on anything: say so, not "intact, 0 lines, head ".
				fmt.Fprintf(f.Out, "%s: empty log: nothing to verify (serve appends one line per call)\n", path)
				return nil
			}
			fmt.Fprintf(f.Out, "%s: intact, %d lines, head %s\n", path, rep.Lines, rep.Head)
			if rep.Unfinished > 0 {
				fmt.Fprintf(f.Out, "%s: %d calls started with no outcome line (serve died running them, or runs them now)\n", path, rep.Unfinished)
			}
			return nil
		},
	})
	return cmd
}

// ctxReader stops reading once ctx ends (SIGINT, SIGTERM): a log that keeps growing, or a
// very long one, does not keep verify running past a signal.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
