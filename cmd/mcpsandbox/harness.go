package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// HarnessOptions are harness's flags.
type HarnessOptions struct {
	IO         *Factory
	PolicyPath string
	Default    bool
	Scheme     string
	Scenarios  []string
	Categories []string
	List       bool
	Controls   bool
	JSON       bool
	JUnit      string
	Parallel   int
	MaxTimeout time.Duration
	Verbose    bool
	schemeSet  bool
}

// NewCmdHarness builds `harness`; runF replaces the run function in tests.
func NewCmdHarness(f *Factory, runF func(context.Context, *HarnessOptions) error) *cobra.Command {
	o := &HarnessOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "harness",
		Short: "Replay adversarial scenarios against a live server and report what was contained",
		Long: "harness starts `mcpsandbox serve` on the policy (a copy whose workspace and audit log point at a\n" +
			"scratch directory, timeout capped by --max-timeout), attacks it over MCP as a client would, and\n" +
			"decides each scenario from detectors outside the sandbox: CONTAINED, BREACH, ERROR or N/A.\n" +
			"Exit status 0 only when every applicable scenario was contained.\n\n" +
			"--controls runs the negative controls instead: deliberately weak policies under which each\n" +
			"detector must report a breach. Exit status 0 only when every detector fired.",
		Example: `  mcpsandbox harness --default                      # the built-in allowlist policy
  mcpsandbox harness --policy policy.toml --category network,filesystem
  mcpsandbox harness --policy policy.toml --scenario fork-bomb-python --json
  mcpsandbox harness --policy policy.toml --junit harness.xml
  mcpsandbox harness --controls                     # prove every detector can fire
  mcpsandbox harness --list`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := sourceOf(o.PolicyPath, o.Default).check(!o.List && !o.Controls); err != nil {
				return fmt.Errorf("%w (or --controls, --list)", err)
			}
			o.schemeSet = cmd.Flags().Changed("scheme")
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runHarness(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	policyFlags(cmd, &o.PolicyPath, &o.Default, "attack")
	fl.StringVar(&o.Scheme, "scheme", policy.Schemes[0], "with --default or --controls: which scheme's; with --policy: the scheme the file must use")
	fl.StringSliceVarP(&o.Scenarios, "scenario", "s", nil, "scenario ids to run (comma-separated; default all)")
	fl.StringSliceVarP(&o.Categories, "category", "c", nil, "categories to run: "+strings.Join(harness.Categories, ", "))
	fl.BoolVar(&o.List, "list", false, "list the scenarios and detectors, then exit")
	fl.BoolVar(&o.Controls, "controls", false, "run the negative controls: every detector must report a breach")
	fl.BoolVar(&o.JSON, "json", false, "print the report as JSON")
	fl.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to this file")
	fl.IntVar(&o.Parallel, "parallel", 0, "scenarios (with --controls: controls) at once, the exclusive ones alone after (default: twice the CPUs, at least 4)")
	fl.DurationVar(&o.MaxTimeout, "max-timeout", 10*time.Second, "cap limits.timeout for the run (0: the policy's own)")
	fl.BoolVarP(&o.Verbose, "verbose", "v", false, "show every detector's evidence")
	return cmd
}

func runHarness(ctx context.Context, o *HarnessOptions) error {
	all, err := harness.Load()
	if err != nil {
		return fmt.Errorf("embedded scenarios: %w", err)
	}
	if o.List {
		return listScenarios(o.IO.Out, all)
	}
	color := colorOK(o.IO.Out)
	if o.Controls {
		sc, err := schemes.Lookup(o.Scheme)
		if err != nil {
			return err
		}
		if err := sc.Runs(); err != nil {
			return err
		}
		if sc.Controls == nil || sc.ControlPolicy == nil || sc.Adapter == nil {
			return fmt.Errorf("the %s scheme has no negative controls in this build", sc.Name)
		}
		base, err := sc.ControlPolicy()
		if err != nil {
			return err
		}
		cs, err := selectControls(sc.Controls(), o.Scenarios)
		if err != nil {
			return err
		}
		rs, err := harness.RunControls(ctx, cs, harness.Options{Parallel: o.Parallel, Policy: base, Adapter: sc.Adapter})
		if err != nil {
			return err
		}
		if o.JSON {
			if err := harness.WriteJSON(o.IO.Out, rs); err != nil {
				return err
			}
		}
		w := o.IO.Out
		if o.JSON {
			w = o.IO.ErrOut
		}
		if err := harness.WriteControls(w, rs, color && !o.JSON); err != nil {
			return &exitError{code: 1}
		}
		return nil
	}
	src := sourceOf(o.PolicyPath, o.Default)
	src.Scheme = o.Scheme
	p, sc, cleanup, err := src.load("")
	defer cleanup()
	if err != nil {
		return err
	}
	if p.Scheme != o.Scheme && o.PolicyPath != "" && o.schemeSet {
		return fmt.Errorf("%s uses the %s scheme, not %s", o.PolicyPath, p.Scheme, o.Scheme)
	}
	if err := sc.Runs(); err != nil {
		return err
	}
	scs, err := harness.Select(all, o.Scenarios, o.Categories)
	if err != nil {
		return err
	}
	rep, err := runScenarios(ctx, o.IO.ErrOut, p, sc, scs, o.Parallel, o.MaxTimeout)
	if err != nil {
		return err
	}
	return reportHarness(o.IO, rep, o.JSON, o.JUnit, color, o.Verbose)
}

func runScenarios(ctx context.Context, progress io.Writer, p *policy.Policy, sc *scheme.Scheme, scs []*harness.Scenario, par int, maxTimeout time.Duration) (*harness.Report, error) {
	if sc.Adapter == nil {
		return nil, fmt.Errorf("the harness cannot attack the %s scheme in this build (no adapter)", sc.Name)
	}
	o := harness.Options{Policy: p, Adapter: sc.Adapter, Parallel: par, MaxTimeout: maxTimeout,
		Notice: func(s string) { fmt.Fprintln(progress, "harness: "+s) }}
	var stop func()
	o.Progress, stop = scenarioProgress(progress, len(scs), isTerminal(progress))
	defer stop()
	return harness.Run(ctx, scs, o)
}

// progressEvery and progressQuiet: off a terminal, a progress line every progressEvery
// scenarios, and after progressQuiet without one (a run took minutes in silence, trial36 F5).
var (
	progressEvery = 10
	progressQuiet = 15 * time.Second
)

// scenarioProgress is the harness's progress callback: on a terminal one line rewritten in
// place; elsewhere (a log file, a pipe, CI) a line now and then. stop ends its timer.
func scenarioProgress(w io.Writer, total int, terminal bool) (func(harness.Result), func()) {
	var mu sync.Mutex
	done := 0
	if terminal {
		return func(harness.Result) {
			mu.Lock()
			defer mu.Unlock()
			done++
			fmt.Fprintf(w, "\r%d/%d scenarios done", done, total)
			if done == total {
				fmt.Fprint(w, "\r\033[K")
			}
		}, func() {}
	}
	if mutated("verify-progress-terminal-only") {
		return nil, func() {}
	}
	start := time.Now()
	last := start
	line := func() { // mu held
		last = time.Now()
		fmt.Fprintf(w, "harness: %d/%d scenarios done (%s)\n", done, total, time.Since(start).Round(time.Second))
	}
	quit := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(progressQuiet / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				mu.Lock()
				if time.Since(last) >= progressQuiet && done < total {
					line()
				}
				mu.Unlock()
			}
		}
	}()
	return func(harness.Result) {
			mu.Lock()
			defer mu.Unlock()
			done++
			if done%progressEvery == 0 || done == total {
				line()
			}
		}, func() {
			once.Do(func() { close(quit) })
		}
}

func reportHarness(f *Factory, rep *harness.Report, asJSON bool, junit string, color, verbose bool) error {
	if junit != "" {
		if err := writeFileAtomic(junit, func(w io.Writer) error { return harness.WriteJUnit(w, rep) }); err != nil {
			return fmt.Errorf("write the JUnit report: %w", err)
		}
	}
	var err error
	if asJSON {
		err = harness.WriteJSON(f.Out, rep)
	} else {
		err = harness.WriteTable(f.Out, rep, harness.TableOptions{Color: color, Verbose: verbose})
	}
	if err != nil {
		return err
	}
	if !rep.OK() {
		return &exitError{code: 1}
	}
	return nil
}

func listScenarios(w io.Writer, all []*harness.Scenario) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CATEGORY\tSCENARIO\tSCHEMES\tDETECTORS\tTITLE")
	for _, s := range all {
		var takes []string // the schemes it applies to: those offering all it needs
		for _, sc := range schemes.All {
			if sc.Adapter != nil && sc.Adapter.Offer().Applies(s) {
				takes = append(takes, sc.Name)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Category, s.ID, strings.Join(takes, ","), strings.Join(s.Detectors, ","), s.Title)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "DETECTOR\tWATCHES")
	for _, d := range harness.Detectors() {
		fmt.Fprintf(tw, "%s\t%s\n", d.Name, d.Watches)
	}
	return tw.Flush()
}

// colorOK: colour only on a terminal, and never when NO_COLOR is set (no-color.org).
func colorOK(w io.Writer) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	return isTerminal(w)
}

func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeFileAtomic renders a report and writes it with generate's atomic writer, so a reader
// never sees half a report and a failure leaves the old file in place.
func writeFileAtomic(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return generate.AtomicWrite(path, b.Bytes(), 0o644)
}

// selectControls keeps the controls of the scenarios -s names (all when none is named); an id
// no control uses is an error naming those that exist.
func selectControls(cs []harness.Control, ids []string) ([]harness.Control, error) {
	if len(ids) == 0 {
		return cs, nil
	}
	var out []harness.Control
	var known []string
	for _, id := range ids {
		n := len(out)
		for _, c := range cs {
			if c.Scenario == id {
				out = append(out, c)
			}
		}
		if len(out) == n {
			for _, c := range cs {
				if !slices.Contains(known, c.Scenario) {
					known = append(known, c.Scenario)
				}
			}
			return nil, fmt.Errorf("no negative control runs the scenario %q: with --controls, -s takes one of %s", id, strings.Join(known, ", "))
		}
	}
	return out, nil
}
