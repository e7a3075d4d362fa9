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
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
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
			fmt.Fprintf(w, "  %-16s %s\n", generate.Shown(s.Name), "left: "+generate.Shown(s.Skip))
			continue
		}
		fmt.Fprintf(w, "  %-16s %s\n", generate.Shown(s.Name), s)
	}
}

// runInitWrapServers picks the entries (the names given, all, or asked) and wraps them.
func runInitWrapServers(ctx context.Context, o *InitOptions, env generate.Env, ask *asker, names []string) error {
	all, targets, err := listServers(env, o.Clients)
	if err != nil {
		return err
	}
	if again, err := rewrapOrphans(o, env, all, names); err != nil {
		return err
	} else if again {
		if all, targets, err = listServers(env, o.Clients); err != nil {
			return err
		}
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
			how = "the policy an earlier wrap of this entry left, as it is"
		}
		fmt.Fprintf(o.IO.Out, "wrapped: %q in %s, with %s: %s\n", s.Name, s.Target.Where(), how, out.Record.Policy)
		for _, p := range out.Passed {
			// a policy left for another project's server of this name is not this one's (atk35 F4)
			fmt.Fprintf(o.IO.Out, "  not used: %s, which an earlier wrap left: %s (a policy is used again only for the entry it was written for)\n", p.Path, p.Why)
		}
		fmt.Fprintf(o.IO.Out, "  checked: the wrapped entry starts with the environment that %s gives it and answers MCP in %d ms, with the tools %s\n",
			s.Target.Client.Name, out.Probe.Elapsed.Milliseconds(), out.Probe.ToolList())
		if out.Hint != "" {
			fmt.Fprintf(o.IO.Out, "  note: %s (its calls that use them will fail)\n", out.Hint)
		}
		printWriteDirNotes(o.IO.Out, out.Record.Policy)
	}
	if failed < len(outs) {
		fmt.Fprintf(o.IO.Out, "widen a policy knowingly: add \"--explain-denials\" to the wrapped entry's args (before \"--\"): the client's MCP log (its server stderr) then names each path or host refused at the client's real calls, or run the entry under the MCP Inspector (npx @modelcontextprotocol/inspector); undo: mcpsandbox init --unwrap NAME\n")
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// rewrapOrphans: an entry named that the config shows wrapped but whose record (init --wrap's
// saved original) is gone is first taken out of wrap from its args, so it is wrapped anew, with a
// record (trial36 F2: it was refused as "wrapped already", and --unwrap said nothing was).
// It reports whether a config was rewritten.
func rewrapOrphans(o *InitOptions, env generate.Env, all []generate.WrapServer, names []string) (bool, error) {
	if len(names) == 0 || slices.Contains(names, "all") || mutated("init-wrap-orphans") {
		return false, nil
	}
	recs, err := generate.LoadWrapRecords(wrapScheme().PolicyDir(env))
	if err != nil {
		return false, err
	}
	var orphans []generate.WrapServer
	for _, s := range all {
		if slices.Contains(names, s.Name) && s.Orphaned(recs) && s.UnwrappedCommand() != nil {
			orphans = append(orphans, s)
		}
	}
	if len(orphans) == 0 {
		return false, nil
	}
	errs, files, err := generate.UnwrapFromArgs(orphans)
	for _, f := range files {
		fmt.Fprintln(o.IO.Out, generate.DescribeWrite(f))
	}
	for i, s := range orphans {
		if errs[i] == nil && err == nil {
			fmt.Fprintf(o.IO.Out, "taken out of wrap first: %q in %s now runs %s (it ran through mcpsandbox wrap, but init --wrap's saved original of it was gone)\n",
				s.Name, s.Target.Where(), unwrappedText(s))
		}
	}
	return len(files) > 0, errors.Join(append(errs, err)...)
}

// pickServers: the names given (each must exist; "all" = every wrappable one), or the user's
// choice on a terminal, or (neither) the list, printed.
func pickServers(o *InitOptions, ask *asker, all []generate.WrapServer, targets []generate.Target, names []string) ([]generate.WrapServer, error) {
	can := slices.DeleteFunc(slices.Clone(all), func(s generate.WrapServer) bool { return s.Skip != "" })
	switch {
	case slices.Contains(names, "all"):
		for _, s := range all {
			if s.Skip != "" {
				fmt.Fprintf(o.IO.ErrOut, "left: %q in %s: %s\n", s.Name, s.Target.Where(), generate.Shown(s.Skip))
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
		opts = append(opts, fmt.Sprintf("%s (%s): %s", generate.Shown(s.Name), s.Target.Spec(), s))
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
	recs, elsewhere, err := recordsHere(env, o.Clients, recs)
	if err != nil {
		return err
	}
	// entries the configs show wrapped whose record is gone (trial36 F2): restored from their
	// args with --force, else named with that command; a name asked for and not restored is exit 1
	names, orphanFailed, err := unwrapOrphans(o, env, all, recs, names)
	if err != nil {
		return err
	}
	if names == nil && orphanFailed >= 0 {
		if orphanFailed > 0 {
			return &exitError{code: 1}
		}
		return nil
	}
	if len(recs) == 0 {
		switch {
		case len(elsewhere) > 0:
			// the same client and scope, another project's file: not this one's to restore (atk35 F8)
			fmt.Fprintf(o.IO.Out, "no entry wrapped by init --wrap in this project (%s)%s\n", env.Project, forClients(o.Clients))
			printElsewhere(o.IO.Out, elsewhere, names)
			if len(names) > 0 {
				return &exitError{code: 1}
			}
			return nil
		case len(all) > 0:
			// wrapped entries there are, under other clients or scopes: named, and not a success
			// when names were asked for (trial34 F3)
			fmt.Fprintf(o.IO.Out, "no entry wrapped by init --wrap for --client %s; wrapped: %s\n", strings.Join(o.Clients, ","), recordSpecs(all))
			if len(names) > 0 {
				return &exitError{code: 1}
			}
			return nil
		}
		if orphanFailed < 0 { // not said after naming or restoring entries whose record was gone (trial39 F14)
			fmt.Fprintln(o.IO.Out, "no entry wrapped by init --wrap here: nothing to restore")
		}
		if orphanFailed > 0 || len(names) > 0 && !slices.Contains(names, "all") && !mutated("init-unwrap-missing-exit0") {
			return &exitError{code: 1} // a name asked for and not restored
		}
		return nil
	}
	chosen, err := pickRecords(o, ask, recs, elsewhere, names)
	if err != nil || len(chosen) == 0 {
		return err
	}
	defer printElsewhere(o.IO.Out, elsewhere, names)
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
	if failed > 0 || orphanFailed > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// unwrapOrphans handles the entries the configs show wrapped (command this mcpsandbox, args
// "wrap … -- COMMAND …") that no record of init --wrap holds: its saved original is gone. Those
// named (or all, with "all"; none given: each is only named) are set to what follows "--" with
// --force, else named with the command that does. It returns the names left for the records
// (nil when only orphans were named: nothing more to do) and how many orphans were asked for
// and not restored (-1: none asked for).
func unwrapOrphans(o *InitOptions, env generate.Env, all, here []generate.WrapRecord, names []string) ([]string, int, error) {
	servers, _, err := listServers(env, o.Clients)
	if err != nil || mutated("init-unwrap-orphans") {
		return names, -1, nil // the records' own path reports what it can
	}
	var orphans []generate.WrapServer
	for _, s := range servers {
		if s.Orphaned(all) {
			orphans = append(orphans, s)
		}
	}
	if len(orphans) == 0 {
		return names, -1, nil
	}
	var asked []generate.WrapServer
	rest := []string{}
	switch {
	case len(names) == 0:
		fmt.Fprintln(o.IO.Out, "wrapped entries whose saved original is gone (init --wrap's record of each):")
		for _, s := range orphans {
			fmt.Fprintf(o.IO.Out, "  %q in %s: restore it with: %s\n", s.Name, s.Target.Where(), orphanUnwrapCommand(env, s))
		}
		return names, -1, nil
	case slices.Contains(names, "all"):
		asked, rest = orphans, names
	default:
		for _, n := range names {
			recorded := slices.ContainsFunc(here, func(r generate.WrapRecord) bool { return r.Name == n })
			i := slices.IndexFunc(orphans, func(s generate.WrapServer) bool { return s.Name == n })
			if recorded || i < 0 {
				rest = append(rest, n)
				continue
			}
			for _, s := range orphans {
				if s.Name == n {
					asked = append(asked, s)
				}
			}
		}
	}
	failed := 0
	if !o.Force {
		for _, s := range asked {
			failed++
			fmt.Fprintf(o.IO.Out, "not restored: %q in %s runs %s, but init --wrap's saved original of it is gone (its record, kept in %s). "+
				"Restore it from its args with: %s (command and args become %s; its env and other keys stay)\n",
				s.Name, s.Target.Where(), s, wrapScheme().PolicyDir(env), orphanUnwrapCommand(env, s), unwrappedText(s))
		}
	} else if len(asked) > 0 {
		errs, files, err := generate.UnwrapFromArgs(asked)
		for _, f := range files {
			fmt.Fprintln(o.IO.Out, generate.DescribeWrite(f))
		}
		for i, s := range asked {
			if errs[i] != nil || err != nil {
				failed++
				fmt.Fprintf(o.IO.Out, "not restored: %v\n", errors.Join(errs[i], err))
				continue
			}
			fmt.Fprintf(o.IO.Out, "restored from its args: %q in %s now runs %s (init --wrap's saved original was gone; its env and other keys stay)\n",
				s.Name, s.Target.Where(), unwrappedText(s))
		}
	}
	if len(rest) == 0 {
		return nil, failed, nil
	}
	return rest, failed, nil
}

// orphanUnwrapCommand restores an orphaned wrapped entry (of project env's configs) from its args.
func orphanUnwrapCommand(env generate.Env, s generate.WrapServer) string {
	c := "mcpsandbox init --unwrap " + shellword.Quote(s.Name) + " --client " + s.Target.Spec() + " --force"
	if s.Target.PerProject() {
		c += " --project " + shellword.Quote(env.Project)
	}
	return c
}

// unwrappedText is the command a wrapped entry runs after "--", as a shell would read it.
func unwrappedText(s generate.WrapServer) string {
	c := s.UnwrappedCommand()
	if len(c) == 0 {
		return "(nothing)"
	}
	return generate.ServerEntry{Command: c[0], Args: c[1:]}.String()
}

// recordsHere splits the records: those of the entries the clients given (or, none given, each
// record's own client and scope) name in this project, and those of the same clients and scopes
// whose config is another project's (a per-project scope: .mcp.json, .vscode/mcp.json, Claude
// Code's project key in ~/.claude.json): a name is unique in one config only, and init --unwrap
// in one project restores that project's entries (atk35 F8). Records of other clients or
// scopes are in neither.
func recordsHere(env generate.Env, clients []string, recs []generate.WrapRecord) (here, elsewhere []generate.WrapRecord, err error) {
	var targets []generate.Target
	if len(clients) > 0 {
		if targets, err = generate.WrapTargets(env, clients); err != nil {
			return nil, nil, err
		}
	}
	for _, r := range recs {
		ts := targets
		if len(clients) == 0 {
			t, err := generate.ResolveTarget(r.Spec(), env)
			if err != nil {
				here = append(here, r) // a client this build does not know: as before, by its record
				continue
			}
			ts = []generate.Target{t}
		}
		switch {
		case slices.ContainsFunc(ts, func(t generate.Target) bool { return t.Holds(r) }):
			here = append(here, r)
		case slices.ContainsFunc(ts, func(t generate.Target) bool { return t.Client.ID == r.Client && t.Scope == r.Scope }):
			elsewhere = append(elsewhere, r)
		}
	}
	return here, elsewhere, nil
}

// printElsewhere names the entries of the names asked for (all, with none or "all") wrapped in
// other projects, left as they are, each with the command that restores it.
func printElsewhere(w io.Writer, elsewhere []generate.WrapRecord, names []string) {
	first := true
	for _, r := range elsewhere {
		if len(names) > 0 && !slices.Contains(names, "all") && !slices.Contains(names, r.Name) {
			continue
		}
		if first {
			fmt.Fprintln(w, "left in place, in other projects:")
			first = false
		}
		fmt.Fprintf(w, "  %s (restore it with: %s)\n", r, unwrapCommand(r))
	}
}

// unwrapCommand is the init --unwrap that restores the record's entry, from anywhere.
func unwrapCommand(r generate.WrapRecord) string {
	c := "mcpsandbox init --unwrap " + shellword.Quote(r.Name) + " --client " + r.Spec()
	if p := r.Project(); p != "" {
		c += " --project " + shellword.Quote(p)
	}
	return c
}

func forClients(clients []string) string {
	if len(clients) == 0 {
		return ""
	}
	return " for --client " + strings.Join(clients, ",")
}

// pickRecords: the names given ("all" = every one), or the user's choice, or the list. Other
// projects' entries (elsewhere) are only named.
func pickRecords(o *InitOptions, ask *asker, recs, elsewhere []generate.WrapRecord, names []string) ([]generate.WrapRecord, error) {
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
				printElsewhere(o.IO.Out, elsewhere, []string{n})
				return nil, fmt.Errorf("no entry named %q was wrapped by init --wrap in this project (wrapped: %s)", n, recordNames(recs))
			}
		}
		return out, nil
	case !ask.on:
		fmt.Fprintln(o.IO.Out, "entries wrapped by init --wrap:")
		for _, r := range recs {
			fmt.Fprintf(o.IO.Out, "  %s (--client %s)\n", r, r.Spec())
		}
		fmt.Fprintln(o.IO.Out, "restore them with: mcpsandbox init --unwrap NAME[,NAME…] (or --unwrap all)")
		printElsewhere(o.IO.Out, elsewhere, nil)
		return nil, nil
	}
	printElsewhere(o.IO.Out, elsewhere, nil)
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
