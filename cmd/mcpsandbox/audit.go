package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/mcpsandbox/mcpsandbox/serve/audit"
	"github.com/spf13/cobra"
)

// NewCmdAudit builds `audit` and `audit verify`.
func NewCmdAudit(f *Factory) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Work with the audit log", Example: "  mcpsandbox audit verify"}
	cmd.AddCommand(&cobra.Command{
		Use:   "verify [FILE]",
		Short: "Check the audit log's hash chain; exits 1 at the first edited, removed or inserted line",
		Long: "verify recomputes the chain. It prints the head hash: record it somewhere else, and a later\n" +
			"verify showing a different head for the same number of lines reveals a rewritten tail.",
		Example: "  mcpsandbox audit verify ~/.local/state/mcpsandbox/audit.jsonl",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			path := ""
			if len(args) == 1 {
				path = args[0]
			} else {
				var err error
				if path, err = audit.DefaultPath(); err != nil {
					return err
				}
			}
			fh, err := os.Open(path)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("open audit log: %w (serve creates it when it starts; give the path in the policy's [audit] path)", err)
			}
			if err != nil {
				return fmt.Errorf("open audit log: %w", err)
			}
			defer fh.Close()
			rep, err := audit.Verify(fh)
			if err != nil {
				fmt.Fprintf(f.ErrOut, "%s: TAMPERED: %v\n", path, err)
				return &exitError{1}
			}
			if rep.Lines == 0 {
				// Nothing to check is not a verdict on anything: say so, not "intact, 0 lines, head ".
				fmt.Fprintf(f.Out, "%s: empty log: nothing to verify (serve appends one line per call)\n", path)
				return nil
			}
			fmt.Fprintf(f.Out, "%s: intact, %d lines, head %s\n", path, rep.Lines, rep.Head)
			return nil
		},
	})
	return cmd
}
