package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/spf13/cobra"
)

// ExplainOptions are explain's flags.
type ExplainOptions struct {
	IO         *Factory
	PolicyPath string
	Default    bool
	JSON       bool
}

// NewCmdExplain builds `explain`; runF replaces the run function in tests.
func NewCmdExplain(f *Factory, runF func(context.Context, *ExplainOptions) error) *cobra.Command {
	o := &ExplainOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Say which threats this policy enforces on this host, by which layer, and which it does not",
		Long: "explain measures the layers serve would apply on this host (as `serve --check` does) and maps each\n" +
			"threat to them: enforced, partly (with the caveat), or NOT enforced (with the reason). Each threat\n" +
			"names the harness scenarios that attack it, so `mcpsandbox harness -s ID` can show the evidence.",
		Example: `  mcpsandbox explain --policy ~/.config/mcpsandbox/policy.toml
  mcpsandbox explain --default --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			initsPolicy(&o.PolicyPath, o.Default, o.IO.ErrOut)
			if err := sourceOf(o.PolicyPath, o.Default).check(true); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runExplain(cmd.Context(), o)
		},
	}
	policyFlags(cmd, &o.PolicyPath, &o.Default, "explain")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print JSON")
	return cmd
}

func runExplain(ctx context.Context, o *ExplainOptions) error {
	p, sc, path, cleanup, err := sourceOf(o.PolicyPath, o.Default).loadWithFile()
	defer cleanup()
	if err != nil {
		return err
	}
	if err := sc.Runs(); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the mcpsandbox binary: %w", err)
	}
	layers, err := verify.Layers(ctx, exe, path)
	if err != nil {
		return err
	}
	threats, err := verify.Explain(p, layers, sc.Threats)
	if err != nil {
		return err
	}
	if o.JSON {
		return harness.WriteJSON(o.IO.Out, map[string]any{"scheme": p.Scheme, "policy_hash": p.Hash(), "threats": threats, "layers": layers,
			"bounds": sc.AllBounds(p)})
	}
	color := colorOK(o.IO.Out)
	fmt.Fprintf(o.IO.Out, "Policy %q (scheme %s) on this host:\n\n", p.Name, p.Scheme)
	gaps := 0
	for _, t := range threats {
		st := fmt.Sprintf("%-13s", t.Status)
		switch t.Status {
		case verify.NotEnforced:
			gaps++
			st = paintIf(color, "1;31", st)
		case verify.Partly:
			st = paintIf(color, "33", st)
		default:
			st = paintIf(color, "32", st)
		}
		fmt.Fprintf(o.IO.Out, "%s %s\n", st, t.Threat)
		if len(t.By) > 0 {
			fmt.Fprintf(o.IO.Out, "%13s by: %s\n", "", strings.Join(t.By, ", "))
		}
		if t.Note != "" {
			fmt.Fprintf(o.IO.Out, "%13s but: %s\n", "", t.Note)
		}
		if len(t.Scenarios) > 0 {
			fmt.Fprintf(o.IO.Out, "%13s attacked by: %s\n", "", strings.Join(t.Scenarios, ", "))
		}
	}
	fmt.Fprintf(o.IO.Out, "\n%d of %d threats not enforced. Evidence: mcpsandbox harness --policy FILE -s SCENARIO\n", gaps, len(threats))
	fmt.Fprintf(o.IO.Out, "\nBounds on what reaches serve (a client, a sandbox or an upstream cannot grow serve or starve the others):\n")
	for _, b := range sc.AllBounds(p) {
		key := "fixed"
		if b.Key != "" {
			key = b.Key
		}
		fmt.Fprintf(o.IO.Out, "  %-7s %s: %s (%s)\n  %7s past it: %s\n", b.Boundary, b.What, b.Value, key, "", b.Past)
	}
	return nil
}
