package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
)

// ExplainOptions are explain's flags.
type ExplainOptions struct {
	IO         *Factory
	PolicyPath string
	Default    bool
	JSON       bool
	Bounds     bool // list every bound on what reaches serve, not their count
}

// NewCmdExplain builds `explain`; runF replaces the run function in tests.
func NewCmdExplain(f *Factory, runF func(context.Context, *ExplainOptions) error) *cobra.Command {
	o := &ExplainOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Say which threats this policy enforces on this host, by which layer, and which it does not",
		Long: "explain measures the layers serve would apply on this host (as `serve --check` does) and maps each\n" +
			"threat to them: enforced, partly (with the caveat), or NOT enforced (with the reason). Each threat\n" +
			"names the harness scenarios that attack it, so `mcpsandbox harness -s ID` can show the evidence.\n" +
			"--bounds lists the bounds on what reaches serve (its stdio and HTTP, the calls, the audit log).",
		Example: `  mcpsandbox explain --policy ~/.config/mcpsandbox/policy.toml
  mcpsandbox explain --policy ~/.config/mcpsandbox/policy.toml --bounds
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
	cmd.Flags().BoolVar(&o.Bounds, "bounds", false, "list every bound on what reaches serve (stdio, HTTP, calls, audit …) with what happens past it (JSON always has them)")
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
	// a policy naming another user's workspace and audit log: said as such, not as serve's
	// "permission denied … mkdir -p" in their home (trial38 F1)
	if !mutated("explain-foreign-policy") {
		if err := policy.ForeignError(path, p.ForeignPaths()); err != nil {
			return err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the mcpsandbox binary: %w", err)
	}
	layers, err := verify.Layers(ctx, exe, path)
	// what serve lacks here (e2b's key) does not change what the policy enforces: explained,
	// with it as a line of its own (trial37 F6: refused, so no one could read the e2b scheme's
	// threats before opening an account)
	var notReady *verify.NotReadyError
	if errors.As(err, &notReady) {
		err = nil
	}
	if err != nil {
		return err
	}
	threats, err := verify.Explain(p, layers, sc.Threats)
	if err != nil {
		return err
	}
	if o.JSON {
		v := map[string]any{"scheme": p.Scheme, "policy_hash": p.Hash(), "threats": threats, "layers": layers,
			"bounds": sc.AllBounds(p)}
		if notReady != nil {
			v["not_ready"] = notReady.NotReady
		}
		return harness.WriteJSON(o.IO.Out, v)
	}
	color := colorOK(o.IO.Out)
	fmt.Fprintf(o.IO.Out, "Policy %q (scheme %s) on this host:\n\n", p.Name, p.Scheme)
	if notReady != nil {
		fmt.Fprintf(o.IO.Out, "%s serve will not start here until %s (what follows does not need it): %s\n\n",
			paintIf(color, "33", "Note:"), notReady.Until, notReady.Why)
	}
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
			if t.Attacks != "" {
				fmt.Fprintf(o.IO.Out, "%13s %s\n", "", t.Attacks)
			}
		}
	}
	fmt.Fprintf(o.IO.Out, "\n%d of %d threats not enforced. %s\n", gaps, len(threats), evidenceLine(o, path, p, sc, threats))
	writeBounds(o.IO.Out, sc.AllBounds(p), o.Bounds, policyArg(o, path))
	return nil
}

// policyArg is how a command names the policy explain read: --default, or --policy PATH.
func policyArg(o *ExplainOptions, path string) string {
	if o.Default {
		return "--default"
	}
	return "--policy " + shellword.Quote(path)
}

// evidenceLine says how to see the attacks behind the verdicts, for this policy: the harness
// command naming it, or why the harness does not attack it here and how to make it (trial35
// F5: "Evidence: mcpsandbox harness --policy FILE -s SCENARIO", a placeholder, and for an
// init --wrap policy a command the harness refused).
func evidenceLine(o *ExplainOptions, path string, p *policy.Policy, sc *scheme.Scheme, threats []verify.Threat) string {
	if mutated("explain-evidence-placeholder") {
		return "Evidence: mcpsandbox harness --policy FILE -s SCENARIO"
	}
	if r, ok := sc.Adapter.(harness.Readier); ok {
		var optIn *harness.OptInError
		if errors.As(r.Ready(p), &optIn) {
			return "Evidence: the harness does not attack this policy here: " + optIn.Why + "; " + optIn.How
		}
	}
	if sc.Adapter == nil {
		return "(the harness cannot attack the " + p.Scheme + " scheme in this build)"
	}
	cmd := "mcpsandbox harness " + policyArg(o, path)
	if slices.ContainsFunc(threats, func(t verify.Threat) bool { return len(t.Scenarios) > 0 }) {
		return "Evidence: " + cmd + " (all its scenarios), or with -s ID for those a threat is attacked by"
	}
	return "Evidence: " + cmd
}

// writeBounds lists the bounds on what reaches serve with what happens past each (--bounds or
// JSON), or says in one line how many there are, by boundary, and how to list them: 75 lines of
// HTTP, stdio and audit bounds after the threats buried them for a stdio setup (trial35 F13).
func writeBounds(w io.Writer, bs []verify.Bound, all bool, arg string) {
	if !all && !mutated("explain-bounds-listed") {
		var order []string
		count := map[string]int{}
		for _, b := range bs {
			k := strings.ReplaceAll(b.Boundary, ", ", "/") // "stdio, http": both
			if count[k] == 0 {
				order = append(order, k)
			}
			count[k]++
		}
		var parts []string
		for _, k := range order {
			parts = append(parts, fmt.Sprintf("%s %d", k, count[k]))
		}
		fmt.Fprintf(w, "\n%d bounds on what reaches serve (%s), listed with what happens past each by: mcpsandbox explain %s --bounds\n",
			len(bs), strings.Join(parts, ", "), arg)
		return
	}
	fmt.Fprintf(w, "\nBounds on what reaches serve (a client, a sandbox or an upstream cannot grow serve or starve the others):\n")
	for _, b := range bs {
		key := "fixed"
		if b.Key != "" {
			key = b.Key
		}
		fmt.Fprintf(w, "  %-7s %s: %s (%s)\n  %7s past it: %s\n", b.Boundary, b.What, b.Value, key, "", b.Past)
	}
}
