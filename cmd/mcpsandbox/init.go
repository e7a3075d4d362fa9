package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// InitOptions are init's flags; the wizard fills what they leave out.
type InitOptions struct {
	IO           *Factory
	A            generate.Answers
	Clients      []string
	Project      string
	PolicyOut    string
	Policy       string // an existing policy the entries run, left as it is (--policy)
	Command      string // the mcpsandbox binary clients run
	Yes          bool
	Print        bool
	Force        bool
	Verify       bool
	Portable     bool              // project files a team commits, this user's policy for the checkout (init_portable.go)
	set          func(string) bool // whether a flag was given
	given        []string          // the flags given, by name
	baseFrom     string            // the policy file the wizard started from ("" = none)
	clients      bool              // only the clients of the server answering at --http (no policy)
	clientsAsked bool              // the wizard asked the clients (asked again, o.Clients are the defaults)
	bin          string            // the binary the entries run (entryBinary)
	wrap         wrapFlags         // init --wrap / --unwrap (init_wrap.go)
	schemeOf     map[string]string // each scheme's own flags: the scheme, by flag name
	flags        *pflag.FlagSet
}

// clientIDsMark stands in init's help for the list of client ids until the help is shown:
// the list decodes the embedded client catalogue, which every other command (serve's start
// above all) would otherwise pay for at construction.
const clientIDsMark = "{client ids}"

// lateClientIDs puts the client ids in place of clientIDsMark when cmd's help or usage is shown.
func lateClientIDs(cmd *cobra.Command) {
	fill := func(c *cobra.Command) {
		ids := strings.Join(generate.ClientIDs(), ", ")
		c.Long = strings.ReplaceAll(c.Long, clientIDsMark, ids)
		if f := c.Flags().Lookup("client"); f != nil {
			f.Usage = strings.ReplaceAll(f.Usage, clientIDsMark, ids)
		}
	}
	help, usage := (&cobra.Command{}).HelpFunc(), (&cobra.Command{}).UsageFunc()
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		fill(c)
		help(c, args)
	})
	cmd.SetUsageFunc(func(c *cobra.Command) error {
		fill(c)
		return usage(c)
	})
}

// NewCmdInit builds `init`; runF replaces the run function in tests.
func NewCmdInit(f *Factory, runF func(context.Context, *InitOptions) error) *cobra.Command {
	o := &InitOptions{IO: f, A: generate.Answers{Wizards: schemes.Wizards()}}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a policy and your MCP clients' config entries (a wizard, or flags)",
		Long: "init asks which scheme, its settings, the limits and which clients to configure, shows a preview of\n" +
			"every file it will change (a diff for existing ones), and writes them only after you confirm.\n" +
			"Client configs are merged, never clobbered: other servers, unknown keys, comments and indentation\n" +
			"stay; a symlinked config is written through its link; owner, group, mode and ACL are kept; the old file\n" +
			"is backed up beside it (a project's file under ~/.local/state/mcpsandbox/backups; the newest 3\n" +
			"and the oldest kept); every write is atomic. Before any client config is written, init starts\n" +
			"the exact command it is about to write, with the environment each client will give it (Gemini\n" +
			"CLI and Codex pass a server only some variables: an entry names those it needs, such as the e2b\n" +
			"key, in the client's own syntax, never their values), and makes a trivial tool call through it;\n" +
			"if that fails, nothing is changed and init says why. With --yes every answer comes from flags\n" +
			"and nothing is asked; without a terminal init asks nothing either, so it needs --yes and the\n" +
			"flags.\n\n" +
			"Clients: " + clientIDsMark + "\n" +
			"claude-code writes the local scope (this project, in ~/.claude.json), as `claude mcp add` does;\n" +
			"claude-code:user is every project, claude-code:project the shared .mcp.json.",
		Example: `  mcpsandbox init                                   # the wizard
  mcpsandbox init --scheme allowlist --allow wc,sort --workspace ~/ai-workspace --client claude-code --yes
  mcpsandbox init --scheme docker --image python:3.12-slim --client cursor --client vscode:user --yes
  mcpsandbox init --scheme docker --network-hosts pypi,api.example.com --client cursor --yes
                                                    # containers reach PyPI and one API through serve's egress proxy, nothing else
  mcpsandbox init --scheme e2b --api-key-env E2B_API_KEY --print --yes   # print the client entry instead
  mcpsandbox init --policy ~/.config/mcpsandbox/policy.toml --client cursor --yes
                                                    # one more client for a policy you have (edited by hand, say): it stays as it is
  mcpsandbox init --http http://127.0.0.1:8765/mcp --token-env MCPSANDBOX_TOKEN --client cursor --yes
                                                    # clients of the serve --http running there (its own policy); only the variable's name is written
  mcpsandbox init --scheme docker --http http://127.0.0.1:8765/mcp --token-env MCPSANDBOX_TOKEN --client cursor --yes
                                                    # also writes the policy to start serve --http with
  mcpsandbox init --portable --scheme allowlist --allow wc,sort --client claude-code:project --client vscode --yes
                                                    # in a team repository's checkout: project files to commit, your own policy for it
  mcpsandbox init --wrap                            # the servers already in your clients' configs: pick which run through mcpsandbox wrap
  mcpsandbox init --wrap everything --client claude-desktop   # that one, a policy of its own, proven by starting it
  mcpsandbox init --unwrap all                      # every entry init --wrap rewrote, restored byte for byte`,
		Args: initArgs(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.set = func(n string) bool { return cmd.Flags().Changed(n) }
			cmd.Flags().Visit(func(f *pflag.Flag) { o.given = append(o.given, f.Name) })
			o.wrap.args = args
			return untilInterrupted(cmd.Context(), initGrace, func(ctx context.Context) error {
				if runF != nil {
					return runF(ctx, o)
				}
				if o.wrap.on() {
					return runInitWrap(ctx, o)
				}
				return runInit(ctx, o)
			})
		},
	}
	fl := cmd.Flags()
	o.flags = fl
	fl.StringVar(&o.A.Scheme, "scheme", "", "allowlist, docker or e2b")
	fl.StringVar(&o.A.Name, "name", "sandbox", "server name, as clients show it")
	fl.BoolVar(&o.A.Network, "network", false, "allowlist: give commands every host (not recommended: --network-hosts names only those they need)")
	fl.StringSliceVar(&o.A.Hosts, "network-hosts", nil, "allowlist and docker: reach only these hosts, through serve's egress proxy: host patterns (pypi.org, api.example.com:443, *.example.com) or presets ("+generate.PresetNames()+"); comma-separated or repeated")
	o.schemeOf = map[string]string{}
	for _, name := range schemes.Offered() { // each scheme's own flags, each known as its
		own := pflag.NewFlagSet(name, pflag.ContinueOnError)
		o.A.OwnOf(name).Flags(own)
		own.VisitAll(func(f *pflag.Flag) { o.schemeOf[f.Name] = name })
		fl.AddFlagSet(own)
	}
	fl.StringVar(&o.A.Timeout, "timeout", "", "limits: wall clock per call (default 30s)")
	fl.StringVar(&o.A.MaxOutput, "max-output", "", "limits: output cap per stream (default 64KiB)")
	fl.StringVar(&o.A.Memory, "memory", "", "limits: memory per call (default 256MiB)")
	fl.IntVar(&o.A.Pids, "pids", 0, "limits: processes per call (default 64)")
	fl.StringVar(&o.A.HTTPURL, "http", "", "client entries reach a running mcpsandbox serve --http at this `URL` (e.g. http://127.0.0.1:8765/mcp) instead of starting serve over stdio")
	fl.StringVar(&o.A.TokenEnv, "token-env", "", "with --http: the environment variable your clients read the bearer token from (only its name is written)")
	fl.StringArrayVar(&o.Clients, "client", nil, "client to configure, as ID or ID:SCOPE (repeatable): "+clientIDsMark)
	fl.StringVar(&o.Project, "project", "", "project directory for project-scoped configs and Claude Code's local scope (default: the current directory; Claude Code's local scope is keyed by the git repository holding it, as Claude Code does)")
	fl.StringVar(&o.Policy, "policy", "", "an existing policy `FILE`: write only the client entries running serve with it; the file stays as it is (no --scheme or policy flags)")
	fl.StringVar(&o.PolicyOut, "policy-out", "", "where to write the policy (default "+defaultPolicyText()+")")
	fl.StringVar(&o.Command, "command", "", "the mcpsandbox binary the client entries run (default: this binary)")
	fl.BoolVarP(&o.Yes, "yes", "y", false, "do not ask: take every answer from flags and write")
	fl.BoolVar(&o.Print, "print", false, "print the client entries to stdout instead of editing client configs (the policy is still written)")
	fl.BoolVar(&o.Force, "force", false, "replace an existing server entry of the same name, or an existing policy file")
	fl.BoolVar(&o.Verify, "verify", false, "run mcpsandbox verify on the result (audit, host checks, attacks)")
	fl.BoolVar(&o.Portable, "portable", false, "for a team repository: project files that hold no machine path (they run mcpsandbox serve --project, found on PATH) and may be committed, and your own policy for this checkout (workspace = the project directory) under your config directory; each teammate runs the same command in their clone")
	addWrapFlags(fl, o)
	lateClientIDs(cmd)
	return cmd
}

// notes is init's IO for everything but the entries it prints: with --print, stdout carries the
// entries alone (`init --print > servers.json` is a file to give as it is), so verify's report
// and the scheme's notes go to stderr (trial33 F12).
func (o *InitOptions) notes() *Factory {
	if !o.Print || mutated("init-print-notes-stdout") {
		return o.IO
	}
	return &Factory{In: o.IO.In, Out: o.IO.ErrOut, ErrOut: o.IO.ErrOut}
}

// interactive: both ends are terminals (survey needs file descriptors on each).
func interactive(f *Factory) bool {
	in, ok := f.In.(*os.File)
	return ok && isTerminal(in) && isTerminal(f.Out)
}

// missingFlags lists what a non-interactive run lacks.
func missingFlags(o *InitOptions) []string {
	var m []string
	if o.Policy != "" { // the policy's own answers
		if len(o.Clients) == 0 && !o.Print {
			m = append(m, "--client ID (the clients to give the policy's entry)")
		}
		return m
	}
	if o.A.Scheme == "" && o.A.HTTPURL == "" { // with --http a running server may need none
		m = append(m, "--scheme allowlist|docker|e2b")
	}
	if own := o.A.Own(); own != nil {
		m = append(m, own.Missing()...)
	}
	return m
}

// startTimeout bounds the check that the written entry answers MCP (a docker pool starts its
// containers first).
const startTimeout = 60 * time.Second

// runInit wires the flags to init's steps: resolve the answers (flags, or the wizard), plan
// (generate.NewPlan), preview and confirm (the wizard only), write (Plan.Write: all or nothing),
// report, and offer verify.
func runInit(ctx context.Context, o *InitOptions) (err error) {
	if err := underSudo(o.IO.ErrOut, os.Getenv("SUDO_USER")); err != nil {
		return err
	}
	written := false
	defer func() {
		if !written && !mutated("init-quit-keeps-made") {
			removeMade(o)
		}
	}()
	env, wiz, err := initAnswers(ctx, o)
	if err != nil {
		return err
	}
	ask := &asker{f: o.IO, on: wiz}
	var plan *generate.Plan
	var res *generate.Written
	for confirm := true; ; {
		if plan, err = planInit(o, env, wiz, ask); err != nil {
			return err
		}
		o.PolicyOut = plan.PolicyPath
		if !wiz {
			plan.SharedWith(o.IO.ErrOut)
		}
		if confirm && wiz && !plan.Unchanged() {
			plan.Preview(o.IO.Out)
			pick, err := atPreview(o, env, ask)
			if err != nil {
				return err
			}
			if pick == previewQuit {
				return errors.New("nothing written")
			}
			if pick == previewChange {
				if err := changeAnswers(ctx, o, env, ask); err != nil {
					return err
				}
				continue // planned again from the answers as they are now, and shown again
			}
		}
		if res, err = plan.Write(ctx, os.Environ(), startTimeout, o.IO.ErrOut); err == nil {
			written = true
			break
		}
		if ctx.Err() != nil && !mutated("init-check-cancel-wording") {
			return cancelledWrite(err)
		}
		if confirm, err = afterFailedWrite(ctx, o, env, ask, err); err != nil {
			return err
		}
	}
	w := o.IO.Out
	if o.Print { // stdout carries the snippets alone
		w = o.IO.ErrOut
	}
	plan.Report(w, res)
	if o.Portable {
		portableReport(w, o, plan)
	}
	for _, s := range plan.Snippets {
		fmt.Fprintln(o.IO.Out, s)
	}
	if o.clients { // a running server's clients: no policy to verify or serve
		if wiz && len(o.Clients) == 0 {
			noClientPicked(w, o, plan.ClientEntry)
		} else if o.Print && len(o.Clients) == 0 && !mutated("init-print-http-cursor-form") {
			printedFor(w, plan.ClientEntry, plan.GenericFor)
		}
		return nil
	}
	return initNext(ctx, o, w, wiz, ask, plan)
}

// removeMade removes the directories init's questions created (o.A.Made) when it ends with
// nothing written: "nothing written" left a workspace the wizard had made (trial46 F4). Only an
// empty one: whatever was put there since stays.
func removeMade(o *InitOptions) {
	for _, d := range o.A.Made {
		if os.Remove(d) == nil {
			fmt.Fprintf(o.IO.ErrOut, "removed the workspace %s init created (nothing was written)\n", d)
		}
	}
	o.A.Made = nil
}

// printedFor says, with --print and no client named, what the entry printed is and what reads it.
func printedFor(w io.Writer, entry generate.ServerEntry, genericFor string) {
	ids := strings.Join(generate.ClientIDs(), ", ")
	if entry.URL != "" { // the Inspector's form: clients write a URL's entry each their own way
		fmt.Fprintf(w, "no client named: the entry printed is the \"mcpServers\" form the MCP Inspector reads for a server at a URL; --client ID (%s) prints that client's own, naming the token's variable in its syntax\n", ids)
		if genericFor != "" {
			fmt.Fprintf(w, "  stdout is that JSON alone: redirect it to a file (> servers.json) and give it to %s\n", genericFor)
		}
		return
	}
	fmt.Fprintf(w, "no client named: the entry printed is the \"mcpServers\" form most clients read; --client ID (%s) prints that client's own\n", ids)
	if genericFor != "" {
		fmt.Fprintf(w, "  stdout is that JSON alone, for %s: redirect it to a file (> servers.json) and give that file as it is\n", genericFor)
	}
}

// noClientPicked: the wizard's user picked no client; the entry to add by hand, and the init
// that adds it to a client later (trial40 F10): the policy's entries with --policy, a URL's with
// --http (a running server's, or the serve --http this policy is for).
func noClientPicked(w io.Writer, o *InitOptions, entry generate.ServerEntry) {
	fmt.Fprintf(w, "no client picked: add this server to your MCP client by hand, as\n  %s\n", entry)
	if mutated("init-wizard-no-client-later") {
		return
	}
	later := "init --policy " + shellword.Quote(o.PolicyOut)
	if entry.URL != "" {
		later = "init --http " + shellword.Quote(entry.URL)
		if entry.TokenEnv != "" {
			later += " --token-env " + entry.TokenEnv
		}
	}
	fmt.Fprintf(w, "  or have init add it to one later: %s %s --client ID (%s)\n", commandName(o.bin), later, strings.Join(generate.ClientIDs(), ", "))
}

// planInit plans every write from the answers as they are now (a retry plans again: the files
// may have changed since).
func planInit(o *InitOptions, env generate.Env, wiz bool, ask *asker) (*generate.Plan, error) {
	popts := generate.PlanOptions{
		Answers: o.A, Env: env, Clients: o.Clients, PolicyOut: o.PolicyOut, BaseFrom: o.baseFrom,
		Binary: o.bin, Force: o.Force, Print: o.Print, Log: o.IO.ErrOut, ClientsOnly: o.clients, UsePolicy: o.Policy != "",
		Confirm: func(msg string) (bool, error) { return ask.confirm(msg, false) },
		Carry:   carriedFlags(o, env), Wizard: wiz, Portable: o.Portable,
	}
	if !o.clients {
		if err := foreignFlags(o); err != nil { // the scheme the wizard chose
			return nil, err
		}
		s, err := schemes.Lookup(o.A.Scheme)
		if err != nil {
			return nil, err
		}
		popts.Proof, popts.ServerEnv = s.Proof, s.ServerEnv
	}
	plan, err := newPlan(o, popts, wiz, ask, env)
	if err != nil {
		return nil, flagsOfKeys(o, err)
	}
	return plan, nil
}

// The choices at the preview: write, go back over the answers, or quit.
const (
	previewWrite  = "Write them"
	previewChange = "Change my answers (yours are the defaults)"
	previewQuit   = "Quit (nothing is written)"
)

// atPreview asks what to do with the changes the preview showed. The preview is where a wrong
// answer is seen: "No" there ended init with every answer lost, and the wizard has no way back
// between its questions (trial40 F1), so it offers to go over them again, as the failure menu does.
func atPreview(o *InitOptions, env generate.Env, ask *asker) (string, error) {
	if mutated("init-wizard-preview-no-back") {
		ok, err := ask.confirm("Write them?", true)
		if err != nil || ok {
			return previewWrite, err
		}
		return previewQuit, nil
	}
	pick := previewQuit
	choices := []string{previewWrite, previewChange, previewQuit}
	q := generate.Question{Kind: generate.Select, Message: func(*generate.Answers) string { return "Write them?" },
		Options: func(*generate.Answers) []string { return choices },
		Default: func(*generate.Answers, generate.Env) any { return previewWrite },
		Set:     func(_ *generate.Answers, v any) { pick = v.(string) }}
	err := ask.question(q, &o.A, env, o.set)
	return pick, err
}

// cancelledWrite is the error of a write cut short by Ctrl-C (or SIGTERM): while init started the
// entry to check it, that was the check's "does not start … context canceled", blaming the entry
// for the user's own cancel (trial40 F3). What the write put back is said as the write said it.
func cancelledWrite(err error) error {
	var se *generate.StartError
	if !errors.As(err, &se) {
		return fmt.Errorf("cancelled: %w", err)
	}
	what := strings.TrimSpace(strings.TrimPrefix(err.Error(), se.Error()))
	if what == "" {
		what = "nothing was written"
	}
	return fmt.Errorf("cancelled while init was checking that the server entry starts: %s", what)
}

// The choices when the write failed (the entry did not start, its trial call failed): nothing
// was written and every answer stays.
const (
	writeRetry  = "Try again (after fixing it, e.g. in another terminal)"
	writeChange = "Change my answers for this scheme (yours are the defaults)"
	writeQuit   = "Quit (nothing is written)"
)

// afterFailedWrite: in the wizard, a write that failed (the trial call refused a workspace root
// owns, say: fixed by a chown in another terminal) offers to try again, to change the scheme's
// answers, or to quit, instead of ending init with every answer lost. It says whether the
// answers changed (the new plan is then shown and confirmed again); an error ends init.
func afterFailedWrite(ctx context.Context, o *InitOptions, env generate.Env, ask *asker, werr error) (bool, error) {
	if !ask.on || errors.Is(werr, errCancelled) || ctx.Err() != nil || mutated("wizard-write-exit") {
		return false, werr
	}
	choices := []string{writeRetry, writeQuit}
	if o.A.Own() != nil && !o.clients {
		choices = []string{writeRetry, writeChange, writeQuit}
	}
	var unset bytes.Buffer
	if o.A.HTTPURL != "" && !mutated("wizard-token-unset-loop") {
		// the URL and the token's variable are answers too: "change my answers" re-asked only
		// the scheme's, so an unset variable repeated its failure until Quit (trial33 F16)
		choices = slices.Insert(choices, len(choices)-1, runningChange)
		if unsetToken(&unset, werr) {
			choices = slices.DeleteFunc(choices, func(c string) bool { return c == writeRetry })
			choices = append([]string{runningChange}, slices.DeleteFunc(choices, func(c string) bool { return c == runningChange })...)
		}
	}
	msg := werr.Error()
	if slices.Contains(choices, writeRetry) && !mutated("init-wizard-retry-says-run-again") {
		// the way on is the menu's "Try again", which the same answers take, not a new init
		// (a hint written for init with flags: trial40 F10)
		msg = strings.ReplaceAll(msg, "then run init again", "then choose Try again below")
	}
	fmt.Fprintf(o.IO.Out, "\n%s\nNothing was written; your answers are kept.\n%s", msg, unset.String())
	pick, err := whatNow(o, env, ask, choices)
	if err != nil {
		return false, err
	}
	switch pick {
	case writeQuit:
		return false, werr
	case writeChange:
		return true, schemeAnswers(ctx, o, env, ask)
	case runningChange:
		return true, askTransport(o, env, ask, generate.TransportQuestions)
	}
	return false, nil
}

// initAnswers resolves the project directory, decides whether to ask (a terminal and no --yes),
// checks the flags, and fills the answers: from the wizard, or from the flags after the host
// checks. It says whether the wizard ran.
func initAnswers(ctx context.Context, o *InitOptions) (generate.Env, bool, error) {
	env, err := generate.ProjectEnv(o.Project)
	if err != nil {
		return env, false, err
	}
	if err := clientsKnown(o.Clients, env); err != nil { // before any file is looked at (trial30 F12)
		return env, false, err
	}
	wiz := !o.Yes && interactive(o.IO)
	if o.Portable {
		if err := portableAnswers(o, env); err != nil {
			return env, false, err
		}
	}
	if o.Policy != "" {
		// The entries of a policy there is: nothing of it is asked or checked beyond what
		// writing the entries proves (their start and a trial call).
		return env, false, usePolicy(o, env)
	}
	if err := initFlags(o, wiz); err != nil {
		return env, wiz, err
	}
	if o.PolicyOut == "" {
		o.PolicyOut = filepath.Join(env.ConfigDir, "mcpsandbox", "policy.toml")
	}
	ask := &asker{f: o.IO, on: wiz}
	if wiz {
		return env, wiz, runWizard(ctx, o, env, ask)
	}
	if o.A.Scheme == "" { // --http without --scheme: only the clients of a server running there
		return env, wiz, clientsOfRunning(ctx, o)
	}
	return env, wiz, checkNeeds(ctx, o, ask)
}

// clientAliases are other names users give clients (their CLIs' names), which the nearest
// spelling would miss or get wrong ("code", VS Code's CLI, is one letter from codex: trial33 F13).
var clientAliases = map[string]string{
	"code": "vscode", "vs-code": "vscode", "visual-studio-code": "vscode", "code-insiders": "vscode",
	"claude": "claude-code, or --client claude-desktop", "claude-cli": "claude-code", "claudecode": "claude-code",
	"gemini-cli": "gemini", "codex-cli": "codex", "openai-codex": "codex",
}

// clientsKnown refuses a --client naming no client or scope init knows, with the nearest one.
func clientsKnown(specs []string, env generate.Env) error {
	for _, spec := range specs {
		if _, err := generate.ResolveTarget(spec, env); err != nil {
			id, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(spec)), ":")
			if other, ok := clientAliases[id]; ok {
				return fmt.Errorf("%w (did you mean --client %s?)", err, other)
			}
			if near := policy.Nearest(strings.ToLower(strings.TrimSpace(spec)), generate.ClientIDs()); near != "" {
				return fmt.Errorf("%w (did you mean --client %s?)", err, near)
			}
			return err
		}
	}
	return nil
}

// initFlags checks the flags before anything is asked: without the wizard every answer must be
// given; the network flags must agree; the entry's binary must exist.
func initFlags(o *InitOptions, wiz bool) error {
	if err := schemeOffered(o.A.Scheme); err != nil {
		return err
	}
	if err := foreignFlags(o); err != nil {
		return err
	}
	if !wiz && !o.Yes {
		msg := "init needs a terminal for its questions, or every answer as flags plus --yes"
		if m := missingFlags(o); len(m) > 0 {
			msg += "; missing: " + strings.Join(m, ", ")
		}
		return errors.New(msg + " (see mcpsandbox init --help)")
	}
	if !wiz {
		if m := missingFlags(o); len(m) > 0 {
			return fmt.Errorf("--yes takes every answer from flags; missing: %s%s", strings.Join(m, ", "), morePolicyClients(o))
		}
	}
	if o.set("pids") && o.A.Pids < 1 { // 0 is the answers' "unset": a given 0 became the default, silently
		return fmt.Errorf("--pids %d: give at least 1 (processes per call; the default is 64)", o.A.Pids)
	}
	if err := netFlags(o); err != nil {
		return err
	}
	bin, err := entryBinary(o)
	if err != nil {
		return err
	}
	o.bin = bin
	return nil
}

// initNext says what to do when no client was configured, and runs verify (asked in the wizard,
// --verify otherwise) or says how to.
func initNext(ctx context.Context, o *InitOptions, w io.Writer, wiz bool, ask *asker, plan *generate.Plan) error {
	entry, genericFor := plan.ClientEntry, plan.GenericFor
	if len(o.Clients) == 0 {
		if wiz {
			noClientPicked(w, o, entry)
		} else if o.Print {
			printedFor(w, entry, genericFor)
		} else {
			fmt.Fprintf(w, "no client configured: add --client ID (%s), or add this server by hand: %s\n",
				strings.Join(generate.ClientIDs(), ", "), entry)
		}
	}
	runV := o.Verify
	// verify runs the attacks only where the scheme does not wait for the user to opt in (e2b's
	// run on their account): what verify will do is said as it is
	optIn := harnessOptIn(plan.Policy)
	if wiz && !o.Verify {
		var err error
		if runV, err = ask.confirm(verifyQuestion(optIn), true); err != nil {
			return err
		}
	}
	if runV {
		return runVerify(ctx, &VerifyOptions{IO: o.notes(), PolicyPath: o.PolicyOut, MaxTimeout: 10 * time.Second})
	}
	fmt.Fprintf(w, "next: %s verify --policy %s\n", commandName(o.bin), shellword.Quote(o.PolicyOut))
	if optIn != nil {
		fmt.Fprintf(w, "  (audit and host checks only: %s; %s)\n", optIn.Why, optIn.How)
	}
	return nil
}

// verifyQuestion is the wizard's offer to run verify, saying what verify will do on the policy.
func verifyQuestion(optIn *harness.OptInError) string {
	if optIn != nil {
		return "Run mcpsandbox verify on it now (audit and host checks only: " + optIn.Why + "; " + optIn.How + ")?"
	}
	return "Run mcpsandbox verify on it now (audit, host checks, and the attacks: about half a minute, a few minutes when each attack starts a container or a cloud sandbox)?"
}

// flagsOfKeys adds to each problem of an invalid policy the flag that gave its key's value.
func flagsOfKeys(o *InitOptions, err error) error {
	var pe *policy.Error
	if !errors.As(err, &pe) || o.set == nil {
		return err
	}
	for i, p := range pe.Problems {
		if f, ok := generate.FlagOfKey(p.Key); ok && o.set(f) && !mutated("init-flag-of-key") {
			pe.Problems[i].Key = fmt.Sprintf("--%s (%s)", f, p.Key)
		}
	}
	return err
}

// commandName is how to run bin from a shell, in a line the user copies: "mcpsandbox" when
// that name on PATH is bin, else bin's path (the README installs to ~/bin, often not on PATH),
// quoted where a shell would split it.
func commandName(bin string) string {
	if bin == "" || mutated("init-next-command") {
		return "mcpsandbox"
	}
	if lp, err := exec.LookPath("mcpsandbox"); err == nil {
		a, errA := os.Stat(lp)
		b, errB := os.Stat(bin)
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return "mcpsandbox"
		}
	}
	return shellword.Quote(bin)
}

// entryBinary is the absolute path clients will run. A --command that does not exist or cannot
// be executed is refused: the entry could never start; so is this binary when `go run` built it.
func entryBinary(o *InitOptions) (string, error) {
	bin := o.Command
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this binary's path: %w (give --command PATH)", err)
		}
		if err := refuseGoRun(exe); err != nil {
			return "", err
		}
		bin = exe
	} else if !strings.ContainsRune(bin, filepath.Separator) {
		lp, err := exec.LookPath(bin)
		if err != nil {
			return "", fmt.Errorf("--command %s: not found on PATH: give the mcpsandbox binary's absolute path", bin)
		}
		bin = lp
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(bin)
	switch {
	case err != nil:
		return "", fmt.Errorf("--command %s: %w: give the path of an mcpsandbox binary", bin, err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 && runtime.GOOS != "windows":
		return "", fmt.Errorf("--command %s is not an executable file: give the path of an mcpsandbox binary", bin)
	}
	// the entries run it as whoever starts the client: serve's rule for its policy file
	// (trial30 F18)
	if err := policy.CheckBinarySafe(bin); err != nil && !mutated("init-command-unowned") {
		if o.Command != "" {
			return "", fmt.Errorf("--command: %w", err)
		}
		if !mutated("init-own-binary-unowned") {
			// the same rule for the binary init runs from, which the entries name when --command
			// is not given: `sudo ~/bin/mcpsandbox init` gave root's clients a binary the user may
			// replace (trial32 F27)
			return "", fmt.Errorf("the entries would run this binary, %s, as whoever starts the client: %w; "+
				"or install one you or root own and run its init, or pass --command PATH of one", bin, err)
		}
		fmt.Fprintf(o.IO.ErrOut, "warning: %v\n", err)
	}
	return bin, nil
}

// schemeOffered refuses --scheme naming a scheme init's wizard does not make (it has no Wizard
// entry), before anything is asked or written; "" is left to missingFlags.
func schemeOffered(name string) error {
	if name == "" {
		return nil
	}
	s, err := schemes.Lookup(name)
	if err != nil {
		// init offers fewer schemes than the registry holds: name those, and the nearest
		msg := fmt.Sprintf("--scheme %s: unknown scheme: init writes %s", name, strings.Join(schemes.Offered(), ", "))
		if near := policy.Nearest(name, schemes.Offered()); near != "" {
			msg += fmt.Sprintf(" (did you mean --scheme %s?)", near)
		}
		return errors.New(msg)
	}
	if s.Wizard != nil {
		return nil
	}
	msg := fmt.Sprintf("--scheme %s: init does not write %s policies from answers (it writes %s)", name, name, strings.Join(schemes.Offered(), ", "))
	if s.Relay != nil {
		msg += "; to put servers already in a client's config under it, run mcpsandbox init --wrap (it writes one policy per server), or write a policy from the template and run mcpsandbox " + name + " --policy FILE -- COMMAND ARGS"
	}
	return errors.New(msg)
}

// netFlags checks the network flags before anything is asked or written: --network and
// --network-hosts do not go together, every host word is checked as the policy checks it (each
// bad one named, with its fix), and the scheme, once known, must take what was given.
func netFlags(o *InitOptions) error {
	if !o.set("network-hosts") {
		if o.set("network") && o.A.Network && o.A.Scheme != "" && !policy.NetworkTakes(o.A.Scheme, policy.NetAll) {
			return fmt.Errorf("--network (every host) is for %s: for %s, list the hosts calls need with --network-hosts (e.g. --network-hosts pypi,api.example.com)", theSchemes(offeredTaking(policy.NetAll)), o.A.Scheme)
		}
		return nil
	}
	if o.set("network") {
		return errors.New("--network (every host, or with =false none) and --network-hosts (only the listed hosts) conflict: give one of them; --network-hosts is the narrower")
	}
	hosts, err := generate.ExpandHosts(o.A.Hosts)
	if err != nil {
		if bad := strings.Split(err.Error(), "\n"); len(bad) > 1 {
			return fmt.Errorf("--network-hosts: %d entries are wrong:\n  %s", len(bad), strings.Join(bad, "\n  "))
		}
		return fmt.Errorf("--network-hosts: %w", err)
	}
	if len(hosts) == 0 {
		return fmt.Errorf("--network-hosts is empty: name at least one host or preset (%s), or leave the flag out for no network", generate.PresetNames())
	}
	if o.A.Scheme != "" && !policy.NetworkTakes(o.A.Scheme, policy.NetHosts) {
		return fmt.Errorf("--network-hosts is for %s (they reach hosts through serve's egress proxy); %s has its own allow_internet: remove --network-hosts", theSchemes(offeredTaking(policy.NetHosts)), o.A.Scheme)
	}
	return nil
}

// foreignFlags refuses a flag of another scheme than the one chosen (trial30 F11: docker with
// allowlist's --workspace mounted nothing, without a word), naming the chosen scheme's flag of
// the same role where it has one. No scheme chosen yet (the wizard asks it) is left for later.
func foreignFlags(o *InitOptions) error {
	if o.A.Scheme == "" || mutated("init-foreign-flag") {
		return nil
	}
	for _, n := range o.given {
		owner, ok := o.schemeOf[n]
		if !ok || owner == o.A.Scheme {
			continue
		}
		msg := fmt.Sprintf("--%s is the %s scheme's", n, owner)
		if role, _ := generate.FlagRole(o.flags.Lookup(n)); role != "" {
			for name, s := range o.schemeOf {
				if r, arg := generate.FlagRole(o.flags.Lookup(name)); s == o.A.Scheme && r == role {
					return fmt.Errorf("%s; for %s use --%s %s", msg, o.A.Scheme, name, arg)
				}
			}
		}
		return fmt.Errorf("%s: %s has no such setting, drop it (mcpsandbox init --help lists each scheme's flags)", msg, o.A.Scheme)
	}
	return nil
}

// offeredTaking are the schemes init writes policies for whose network key takes m (init's
// messages name only what init can do).
func offeredTaking(m policy.NetMode) []string {
	var out []string
	for _, s := range policy.SchemesTaking(m) {
		if slices.Contains(schemes.Offered(), s) {
			out = append(out, s)
		}
	}
	return out
}

// theSchemes names schemes in a sentence: "the a scheme", "the a and b schemes".
func theSchemes(names []string) string {
	switch len(names) {
	case 0:
		return "no scheme"
	case 1:
		return "the " + names[0] + " scheme"
	}
	return "the " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " schemes"
}

// clientsOfRunning: --http without --scheme configures the clients of the server answering at
// the URL, which runs its own policy; when nothing answers there, init needs --scheme to write
// the policy to serve.
func clientsOfRunning(ctx context.Context, o *InitOptions) error {
	u, probed, err := runningAt(ctx, o)
	switch {
	case err != nil && !probed:
		return err
	case errors.Is(err, generate.ErrNotRunning):
		return fmt.Errorf("%s: %w: start the server first (mcpsandbox serve --policy FILE --http HOST:PORT) and run init again, or give --scheme allowlist|docker|e2b to write the policy it will serve. Nothing was written", u, err)
	case err != nil:
		return fmt.Errorf("%w; nothing was written", err)
	}
	o.clients = true
	return nil
}

// runningAt checks that an mcpsandbox server answers MCP at the answers' URL, with the token in
// their variable; it returns the URL as the entries write it, and whether the server was asked
// (else the URL or the variable was refused before).
func runningAt(ctx context.Context, o *InitOptions) (string, bool, error) {
	u, err := generate.CheckHTTPURL(o.A.HTTPURL)
	if err != nil {
		return u, false, err
	}
	e := generate.NewHTTPEntry(u, o.A.TokenEnv)
	if err := generate.CheckHTTPEntry(e); err != nil {
		return u, false, err
	}
	_, err = generate.HTTPCheck(ctx, e, os.Environ(), generate.HTTPCheckTimeout)
	return u, true, err
}

// morePolicyClients is, for an init that names clients and no scheme while the policy init
// writes by default is there, the command that gives them that policy (trial32 F28: "one more
// client for the policy I have" is the likeliest reason to leave --scheme out).
func morePolicyClients(o *InitOptions) string {
	if o.A.Scheme != "" || o.A.HTTPURL != "" || o.Policy != "" || len(o.Clients) == 0 || mutated("init-more-clients-silent") {
		return ""
	}
	p := o.PolicyOut
	if p == "" {
		p = initsPolicyFile()
	}
	if cmd := generate.InitPolicyCommand(p, o.Clients, nil); cmd != "" {
		return "; or, to give these clients the policy you have, as it is: " + cmd
	}
	return ""
}

// underSudo: init run as root by sudo for the user sudoUser writes the configs of whoever HOME
// names. With the user's HOME kept (HOME is theirs), their files would get entries whose trial
// runs as root, which serve's ownership rules refuse, and a workspace made the sandbox uid's; it
// is refused. With root's HOME, it configures root's clients, which it says (trial32 F19).
func underSudo(w io.Writer, sudoUser string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	home, _ := os.UserHomeDir()
	// without sudo (su -m, a root shell with HOME exported): a HOME another user owns is theirs,
	// and files init made there would be root's, which their clients could not read or change
	// (trial33 F11)
	if uid, ok := ownerUID(home); ok && uid != 0 && !mutated("init-root-in-anothers-home") {
		name := strconv.Itoa(uid)
		if u, err := user.LookupId(name); err == nil {
			name = u.Username
		}
		return fmt.Errorf("init runs as root with HOME=%s, which belongs to %s (uid %d): it would write that user's client configs as root's files, "+
			"which their clients could then neither read nor change. init needs no root: run it as %s (for the docker scheme, join the docker group: "+
			"usermod -aG docker %s, then log in again), or with root's own HOME to configure root's clients", home, name, uid, name, name)
	}
	if sudoUser == "" || mutated("init-sudo-silent") {
		return nil
	}
	root, err := user.Current()
	if err != nil || home == "" {
		return nil
	}
	if u, err := user.Lookup(sudoUser); err == nil && filepath.Clean(home) == filepath.Clean(u.HomeDir) {
		return fmt.Errorf("init runs as root (sudo, for %s) with a HOME that is not root's (%s): it would write %s's client configs with entries it checks as root. "+
			"init needs no root: run it as %s, without sudo (for the docker scheme, join the docker group: sudo usermod -aG docker %s, then log in again)",
			sudoUser, home, sudoUser, sudoUser, sudoUser)
	}
	if filepath.Clean(home) == filepath.Clean(root.HomeDir) {
		fmt.Fprintf(w, "note: init runs as root (sudo, for %s): it configures root's clients (HOME=%s), not %s's; to configure yours, run it as %s, without sudo\n",
			sudoUser, home, sudoUser, sudoUser)
	}
	return nil
}

// carriedFlags are this init's flags that init --policy takes as they are, as shell words with
// their values resolved (the directory and binary this init uses), for the command a refusal
// names: the same entries, written where this one would write them, or only printed.
func carriedFlags(o *InitOptions, env generate.Env) []string {
	var w []string
	if o.set != nil && o.set("project") {
		w = append(w, "--project", shellword.Quote(env.Project))
	}
	if o.set != nil && o.set("command") {
		w = append(w, "--command", shellword.Quote(o.bin))
	}
	if o.Print {
		w = append(w, "--print")
	}
	if o.Verify {
		w = append(w, "--verify")
	}
	return w
}

// policyFlagsAllowed are the flags init --policy FILE takes: they choose clients and how entries
// are written, none shapes a policy.
var policyFlagsAllowed = []string{"policy", "client", "project", "command", "yes", "print", "force", "verify"}

// policyOffered refuses init --policy FILE of a scheme whose policies init does not give
// clients (wrap), in the file's words: the user gave a file, not --scheme (trial32 F8).
func policyOffered(file, name string) error {
	if schemeOffered(name) == nil {
		return nil
	}
	offered := schemes.Offered()
	msg := fmt.Sprintf("%s is a %s policy (scheme = %q)", file, name, name)
	if s, err := schemes.Lookup(name); err == nil && s.Relay != nil {
		msg += ", whose client entries are the wrapped server's own, rewritten by mcpsandbox init --wrap"
	}
	return fmt.Errorf("%s; init --policy gives clients %s or %s policies", msg,
		strings.Join(offered[:len(offered)-1], ", "), offered[len(offered)-1])
}

// usePolicy readies init --policy FILE: the flags must not shape a policy, the file must load
// (its problems at file:line), and the entries run it from where it is.
func usePolicy(o *InitOptions, env generate.Env) error {
	for _, n := range o.given {
		if n == "name" && !mutated("init-policy-name-advice") {
			// the entry is named by the policy: say where (trial22)
			return fmt.Errorf("--name does not go with --policy: the entries are named by the policy's own name key; "+
				"to add this policy's entry beside another server of the same name, set name = \"…\" in %s (clients show it as the server's name)", o.Policy)
		}
		if !slices.Contains(policyFlagsAllowed, n) {
			return fmt.Errorf("--%s does not go with --policy: init --policy writes only the client entries of the policy as it is "+
				"(edit the file for its settings, or leave --policy out to write a new policy)", n)
		}
	}
	if m := missingFlags(o); len(m) > 0 {
		return fmt.Errorf("init --policy: missing %s (see mcpsandbox init --help)", strings.Join(m, ", "))
	}
	path, err := filepath.Abs(generate.ExpandHome(o.Policy, env.Home))
	if err != nil {
		return err
	}
	p, err := policy.Load(path)
	if err != nil {
		return err
	}
	if err := policyOffered(o.Policy, p.Scheme); err != nil {
		return err
	}
	o.A.Scheme, o.PolicyOut = p.Scheme, path
	o.bin, err = entryBinary(o)
	return err
}

// refuseGoRun refuses exe for a client entry when `go run` built it: Go removes it later, and
// the entry would work today and fail weeks from now.
func refuseGoRun(exe string) error {
	if !goRunBinary(exe) {
		return nil
	}
	return fmt.Errorf("this init runs from a temporary `go run` binary (%s), which Go removes later, so a client entry naming it would stop working: "+
		"build one ("+BuildCommand+", or CGO_ENABLED=0 go install ./cmd/mcpsandbox) and run its init, or pass --command PATH of a built binary", exe)
}

// goRunBinary says whether exe is a binary `go run` built: in Go's temporary work directory
// ($GOTMPDIR/go-buildN/b001/exe/NAME; `go test`'s binaries are not in an exe directory), or,
// since Go 1.24, in the build cache, which Go trims too (trial30 F14).
func goRunBinary(exe string) bool {
	return !mutated("init-go-run-binary") && goRunBinaryIn(exe, goCacheDir())
}

// goCacheDir is where Go's build cache is as go itself finds it from the environment ($GOCACHE,
// else the user cache dir's go-build), without running `go env`; "" when unknown.
func goCacheDir() string {
	if c := os.Getenv("GOCACHE"); c != "" {
		if c == "off" {
			return ""
		}
		return c
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "go-build")
}

// goRunBinaryIn is goRunBinary with the build cache at cache ("" = unknown): a binary under the
// cache, or one in the cache's own layout, XX/HASH-d/NAME (XX the hash's first two hex digits),
// which a cache set by `go env -w GOCACHE` (not in the environment) still shows.
func goRunBinaryIn(exe, cache string) bool {
	dir := filepath.Dir(exe)
	if strings.Contains(exe, string(filepath.Separator)+"go-build") && filepath.Base(dir) == "exe" {
		return true
	}
	if cache != "" {
		if rel, err := filepath.Rel(policy.RealPath(cache), policy.RealPath(dir)); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	hash, ok := strings.CutSuffix(filepath.Base(dir), "-d")
	xx := filepath.Base(filepath.Dir(dir))
	return ok && len(xx) == 2 && len(hash) > 2 && isHex(xx) && isHex(hash) && strings.HasPrefix(hash, xx)
}

func isHex(s string) bool {
	return s != "" && strings.Trim(s, "0123456789abcdef") == ""
}

// initGrace is how long init may go on after SIGINT or SIGTERM before it is given up.
const initGrace = 5 * time.Second

// untilInterrupted runs f and returns its error, or, when ctx is cancelled (main's
// signal.NotifyContext: SIGINT or SIGTERM) and f has not returned within grace, an error saying
// so: init blocked where it does not watch ctx (a read that never returns) still ends on a
// signal, instead of catching it and going on waiting until SIGKILL. Its writes replace files
// by rename, so one cut short leaves each file whole, old or new.
func untilInterrupted(ctx context.Context, grace time.Duration, f func(context.Context) error) error {
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if mutated("init-signal-ends") {
		return <-done
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("init stopped by a signal (%v) while it was still waiting: files it had written stay written, their backups beside them or under the state directory; run init again", context.Cause(ctx))
	}
}
