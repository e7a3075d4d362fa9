package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/AlecAivazis/survey/v2"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// init --wrap / --unwrap: rewrite the stdio servers already in client configs to run through
// `mcpsandbox wrap` with a policy each, and put them back byte for byte.

// wrapFlags are init's --wrap and --unwrap.
type wrapFlags struct {
	wrap, unwrap []string // the names given with the flag ("*" = none given)
	args         []string // init's arguments: more names
}

// askNames is the value of --wrap or --unwrap given without names.
const askNames = "*"

// addWrapFlags adds --wrap and --unwrap to init, named after the scheme (and command) they put
// entries under; a build without it has neither.
func addWrapFlags(fl *pflag.FlagSet, o *InitOptions) {
	w := string(wrapScheme())
	if w == "" {
		return
	}
	fl.StringSliceVar(&o.wrap.wrap, w, nil, "run the servers `NAMES` (comma-separated or as arguments, or all) already in your client configs through mcpsandbox "+w+", a policy each (--client ID picks the config); --"+w+" alone (shown [=*]: no names) asks which, or without a terminal lists them")
	fl.Lookup(w).NoOptDefVal = askNames
	fl.StringSliceVar(&o.wrap.unwrap, "un"+w, nil, "restore the entries `NAMES` (comma-separated or as arguments, or all) init --"+w+" rewrote, byte for byte; --un"+w+" alone (shown [=*]: no names) asks which, or without a terminal lists them")
	fl.Lookup("un" + w).NoOptDefVal = askNames
}

// wrapScheme is the scheme init --wrap writes policies for, whose name is also the command a
// wrapped entry runs: the registry's relay ("" in a build without one: no --wrap flags).
func wrapScheme() generate.WrapScheme {
	for _, s := range schemes.All {
		if s.Relay != nil {
			return generate.WrapScheme(s.Name)
		}
	}
	return ""
}

// on reports whether init runs as init --wrap or --unwrap.
func (w wrapFlags) on() bool { return len(w.wrap) > 0 || len(w.unwrap) > 0 }

// initArgs: init takes no arguments, except names after --wrap or --unwrap
// (`init --wrap fs git`, `init --unwrap all`).
func initArgs(o *InitOptions) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if o.wrap.on() {
			return nil
		}
		return cobra.NoArgs(cmd, args)
	}
}

// names are the server names given: the flag's and the arguments, split at commas.
func (w wrapFlags) names(given []string) []string {
	var out []string
	for _, a := range append(slices.Clone(given), w.args...) {
		for _, n := range strings.Split(a, ",") {
			if n = strings.TrimSpace(n); n != "" && n != askNames && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// runInitWrap is init --wrap or --unwrap.
func runInitWrap(ctx context.Context, o *InitOptions) error {
	if len(o.wrap.wrap) > 0 && len(o.wrap.unwrap) > 0 {
		return errors.New("--wrap and --unwrap conflict: give one of them")
	}
	env, err := generate.ProjectEnv(o.Project)
	if err != nil {
		return err
	}
	ask := &asker{f: o.IO, on: !o.Yes && interactive(o.IO)}
	if len(o.wrap.unwrap) > 0 {
		return runInitUnwrap(o, env, ask, o.wrap.names(o.wrap.unwrap))
	}
	return runInitWrapServers(ctx, o, env, ask, o.wrap.names(o.wrap.wrap))
}

// listed is every server in the configs looked at.
func listServers(env generate.Env, clients []string) ([]generate.WrapServer, []generate.Target, error) {
	targets, err := generate.WrapTargets(env, clients)
	if err != nil {
		return nil, nil, err
	}
	var all []generate.WrapServer
	for _, t := range targets {
		src, err := generate.ReadConfigFile(t.Path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", t.Path, err)
		}
		l, err := wrapScheme().ListServers(t, src, env.LookPath)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, l...)
	}
	return all, targets, nil
}

// printServers lists the servers found, config by config, each wrappable or why not.
func printServers(w io.Writer, all []generate.WrapServer, targets []generate.Target) {
	if len(all) == 0 {
		var where []string
		for _, t := range targets {
			where = append(where, t.Where())
		}
		if len(where) == 0 {
			fmt.Fprintln(w, "no client config found here: init --wrap rewrites servers already in a client's config (give --client ID to name one)")
			return
		}
		fmt.Fprintf(w, "no servers in %s\n", strings.Join(where, ", "))
		return
	}
	var last string
	for _, s := range all {
		if h := s.Target.Client.Name + " (" + s.Target.Spec() + "): " + s.Target.Where(); h != last {
			fmt.Fprintln(w, h)
			last = h
		}
		if s.Skip != "" {
			fmt.Fprintf(w, "  %-16s %s\n", s.Name, "left: "+s.Skip)
			continue
		}
		fmt.Fprintf(w, "  %-16s %s\n", s.Name, s)
	}
}

// runInitWrapServers picks the entries (the names given, all, or asked) and wraps them.
func runInitWrapServers(ctx context.Context, o *InitOptions, env generate.Env, ask *asker, names []string) error {
	all, targets, err := listServers(env, o.Clients)
	if err != nil {
		return err
	}
	chosen, err := pickServers(o, ask, all, targets, names)
	if err != nil || len(chosen) == 0 {
		return err
	}
	bin, err := entryBinary(o)
	if err != nil {
		return err
	}
	opts := generate.WrapOptions{Scheme: wrapScheme(), Binary: bin, PolicyDir: wrapScheme().PolicyDir(env), Parent: os.Environ(), Timeout: startTimeout}
	outs, files, err := generate.WrapEntries(ctx, opts, chosen)
	for _, f := range files {
		fmt.Fprintln(o.IO.Out, generate.DescribeWrite(f))
	}
	failed := 0
	for _, out := range outs {
		s := out.Server
		if out.Err != nil {
			failed++
			fmt.Fprintf(o.IO.Out, "not wrapped: %q in %s: %v\n", s.Name, s.Target.Where(), out.Err)
			continue
		}
		how := "a new policy"
		if out.Reused {
			how = "the policy an earlier wrap left, as it is"
		}
		fmt.Fprintf(o.IO.Out, "wrapped: %q in %s, with %s: %s\n", s.Name, s.Target.Where(), how, out.Record.Policy)
		fmt.Fprintf(o.IO.Out, "  checked: the wrapped entry starts with the environment that %s gives it and answers MCP in %d ms, with the tools %s\n",
			s.Target.Client.Name, out.Probe.Elapsed.Milliseconds(), strings.Join(out.Probe.Tools, ", "))
		if out.Hint != "" {
			fmt.Fprintf(o.IO.Out, "  note: %s (its calls that use them will fail)\n", out.Hint)
		}
	}
	if failed < len(outs) {
		fmt.Fprintf(o.IO.Out, "widen a policy knowingly: mcpsandbox wrap --policy P --explain-denials -- CMD names what it refuses; undo: mcpsandbox init --unwrap NAME\n")
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// pickServers: the names given (each must exist; "all" = every wrappable one), or the user's
// choice on a terminal, or (neither) the list, printed.
func pickServers(o *InitOptions, ask *asker, all []generate.WrapServer, targets []generate.Target, names []string) ([]generate.WrapServer, error) {
	can := slices.DeleteFunc(slices.Clone(all), func(s generate.WrapServer) bool { return s.Skip != "" })
	switch {
	case slices.Contains(names, "all"):
		for _, s := range all {
			if s.Skip != "" {
				fmt.Fprintf(o.IO.ErrOut, "left: %q in %s: %s\n", s.Name, s.Target.Where(), s.Skip)
			}
		}
		if len(can) == 0 {
			printServers(o.IO.Out, all, targets)
			return nil, errors.New("no server here can be wrapped")
		}
		return can, nil
	case len(names) > 0:
		var out []generate.WrapServer
		for _, n := range names {
			i := slices.IndexFunc(all, func(s generate.WrapServer) bool { return s.Name == n })
			if i < 0 {
				printServers(o.IO.ErrOut, all, targets)
				return nil, fmt.Errorf("no server named %q in the configs above: name one of them, or give --client ID", n)
			}
			for _, s := range all {
				if s.Name == n {
					out = append(out, s) // a skipped one is reported by Wrap, with why
				}
			}
		}
		return out, nil
	case !ask.on:
		printServers(o.IO.Out, all, targets)
		if len(can) > 0 {
			fmt.Fprintln(o.IO.Out, "wrap them with: mcpsandbox init --wrap NAME[,NAME…] (or --wrap all), with --client ID to pick a config")
		}
		return nil, nil
	}
	printServers(o.IO.Out, all, targets)
	if len(can) == 0 {
		return nil, errors.New("no server here can be wrapped")
	}
	var opts []string
	for _, s := range can {
		opts = append(opts, fmt.Sprintf("%s (%s): %s", s.Name, s.Target.Spec(), s))
	}
	var got []int
	err := survey.AskOne(&survey.MultiSelect{Message: "Wrap which servers (space to tick)?", Options: opts, PageSize: 12}, &got, ask.opts())
	if err != nil {
		return nil, interrupted(err)
	}
	var out []generate.WrapServer
	for _, i := range got {
		out = append(out, can[i])
	}
	if len(out) == 0 {
		fmt.Fprintln(o.IO.Out, "none picked: nothing changed")
	}
	return out, nil
}

// runInitUnwrap restores the entries named (or all, or those picked), from the records init --wrap
// kept beside their policies.
func runInitUnwrap(o *InitOptions, env generate.Env, ask *asker, names []string) error {
	recs, err := generate.LoadWrapRecords(wrapScheme().PolicyDir(env))
	if err != nil {
		return err
	}
	all := recs
	if len(o.Clients) > 0 {
		targets, err := generate.WrapTargets(env, o.Clients)
		if err != nil {
			return err
		}
		recs = slices.DeleteFunc(slices.Clone(recs), func(r generate.WrapRecord) bool {
			return !slices.ContainsFunc(targets, func(t generate.Target) bool { return t.Client.ID == r.Client && t.Scope == r.Scope })
		})
	}
	if len(recs) == 0 {
		if len(all) > 0 {
			// wrapped entries there are, under other clients or scopes: named, and not a success
			// when names were asked for (trial34 F3)
			fmt.Fprintf(o.IO.Out, "no entry wrapped by init --wrap for --client %s; wrapped: %s\n", strings.Join(o.Clients, ","), recordSpecs(all))
			if len(names) > 0 {
				return &exitError{code: 1}
			}
			return nil
		}
		fmt.Fprintln(o.IO.Out, "no entry wrapped by init --wrap here: nothing to restore")
		return nil
	}
	chosen, err := pickRecords(o, ask, recs, names)
	if err != nil || len(chosen) == 0 {
		return err
	}
	outs, files, err := generate.Unwrap(chosen, o.Force)
	for _, f := range files {
		fmt.Fprintln(o.IO.Out, generate.DescribeWrite(f))
	}
	failed := 0
	for _, u := range outs {
		if u.Err != nil {
			failed++
			fmt.Fprintf(o.IO.Out, "not restored: %v\n", u.Err)
			continue
		}
		fmt.Fprintf(o.IO.Out, "restored: %s, byte for byte (its policy stays: %s)\n", u.Record, u.Record.Policy)
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// pickRecords: the names given ("all" = every one), or the user's choice, or the list.
func pickRecords(o *InitOptions, ask *asker, recs []generate.WrapRecord, names []string) ([]generate.WrapRecord, error) {
	switch {
	case slices.Contains(names, "all"):
		return recs, nil
	case len(names) > 0:
		var out []generate.WrapRecord
		for _, n := range names {
			found := false
			for _, r := range recs {
				if r.Name == n {
					out, found = append(out, r), true
				}
			}
			if !found {
				return nil, fmt.Errorf("no entry named %q was wrapped by init --wrap (wrapped: %s)", n, recordNames(recs))
			}
		}
		return out, nil
	case !ask.on:
		fmt.Fprintln(o.IO.Out, "entries wrapped by init --wrap:")
		for _, r := range recs {
			fmt.Fprintf(o.IO.Out, "  %s (--client %s)\n", r, r.Spec())
		}
		fmt.Fprintln(o.IO.Out, "restore them with: mcpsandbox init --unwrap NAME[,NAME…] (or --unwrap all)")
		return nil, nil
	}
	var opts []string
	for _, r := range recs {
		opts = append(opts, fmt.Sprintf("%s (%s)", r, r.Spec()))
	}
	var got []int
	if err := survey.AskOne(&survey.MultiSelect{Message: "Restore which entries (space to tick)?", Options: opts, PageSize: 12}, &got, ask.opts()); err != nil {
		return nil, interrupted(err)
	}
	var out []generate.WrapRecord
	for _, i := range got {
		out = append(out, recs[i])
	}
	return out, nil
}

// recordSpecs names each record with the --client value that reaches it.
func recordSpecs(recs []generate.WrapRecord) string {
	var n []string
	for _, r := range recs {
		n = append(n, fmt.Sprintf("%q (--client %s)", r.Name, r.Spec()))
	}
	return strings.Join(n, ", ")
}

func recordNames(recs []generate.WrapRecord) string {
	var n []string
	for _, r := range recs {
		n = append(n, r.Name)
	}
	return strings.Join(n, ", ")
}
