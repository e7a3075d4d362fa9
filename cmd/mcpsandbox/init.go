package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/AlecAivazis/survey/v2"
	"github.com/AlecAivazis/survey/v2/terminal"
	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/verify"
	"github.com/spf13/cobra"
)

// InitOptions are init's flags; the wizard fills what they leave out.
type InitOptions struct {
	IO        *Factory
	A         generate.Answers
	Allow     string
	Clients   []string
	Project   string
	PolicyOut string
	Command   string // the mcpsandbox binary clients run
	Yes       bool
	Print     bool
	Force     bool
	Verify    bool
	set       func(string) bool // whether a flag was given
}

// NewCmdInit builds `init`; runF replaces the run function in tests.
func NewCmdInit(f *Factory, runF func(context.Context, *InitOptions) error) *cobra.Command {
	o := &InitOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Write a policy and your MCP clients' config entries (a wizard, or flags)",
		Long: "init asks which scheme, its settings, the limits and which clients to configure, shows a preview of\n" +
			"every file it will change (a diff for existing ones), and writes them only after you confirm.\n" +
			"Client configs are merged, never clobbered: other servers, unknown keys, comments and indentation\n" +
			"stay; the old file is backed up beside it; the write is atomic. With --yes (or no terminal) every\n" +
			"answer comes from flags.\n\nClients: " + strings.Join(generate.ClientIDs(), ", "),
		Example: `  mcpsandbox init                                   # the wizard
  mcpsandbox init --scheme allowlist --allow wc,sort --workspace ~/ai-workspace --client claude-code --yes
  mcpsandbox init --scheme docker --image python:3.12-slim --client cursor --client vscode:user --yes
  mcpsandbox init --scheme e2b --api-key-env E2B_API_KEY --print --yes   # print the client entry instead`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.set = func(n string) bool { return cmd.Flags().Changed(n) }
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runInit(cmd.Context(), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.A.Scheme, "scheme", "", "allowlist, docker or e2b")
	fl.StringVar(&o.A.Name, "name", "sandbox", "server name, as clients show it")
	fl.StringVar(&o.A.Workspace, "workspace", "", "allowlist: the commands' working directory, the only writable place (created if missing)")
	fl.StringVar(&o.Allow, "allow", "", "allowlist: commands to allow, comma-separated names or absolute paths (each pinned by sha256)")
	fl.BoolVar(&o.A.Network, "network", false, "allowlist: give commands network access (not recommended)")
	fl.StringVar(&o.A.Image, "image", "", "docker: image (default python:3.12-slim)")
	fl.StringVar(&o.A.DockerWorkspace, "docker-workspace", "", "docker: host directory to mount at /workspace")
	fl.BoolVar(&o.A.DockerWorkspaceWritable, "docker-workspace-writable", false, "docker: mount the workspace writable")
	fl.IntVar(&o.A.Pool, "pool", 0, "docker: containers to keep pre-started (each used for one call)")
	fl.StringVar(&o.A.E2BTemplate, "e2b-template", "", "e2b: sandbox template (default code-interpreter-v1)")
	fl.StringVar(&o.A.APIKeyEnv, "api-key-env", "", "e2b: the environment variable holding the API key (default E2B_API_KEY; the key is never written)")
	fl.StringVar(&o.A.Reuse, "reuse", "", "e2b: call (new sandbox per call) or session (default)")
	fl.StringVar(&o.A.Timeout, "timeout", "", "limits: wall clock per call (default 30s)")
	fl.StringVar(&o.A.MaxOutput, "max-output", "", "limits: output cap per stream (default 64KiB)")
	fl.StringVar(&o.A.Memory, "memory", "", "limits: memory per call (default 256MiB)")
	fl.IntVar(&o.A.Pids, "pids", 0, "limits: processes per call (default 64)")
	fl.StringArrayVar(&o.Clients, "client", nil, "client to configure, as ID or ID:SCOPE (repeatable): "+strings.Join(generate.ClientIDs(), ", "))
	fl.StringVar(&o.Project, "project", "", "project directory for project-scoped configs (default: the current directory)")
	fl.StringVar(&o.PolicyOut, "policy-out", "", "where to write the policy (default $XDG_CONFIG_HOME/mcpsandbox/policy.toml)")
	fl.StringVar(&o.Command, "command", "", "the mcpsandbox binary the client entries run (default: this binary)")
	fl.BoolVarP(&o.Yes, "yes", "y", false, "do not ask: take every answer from flags and write")
	fl.BoolVar(&o.Print, "print", false, "print the client entries to stdout instead of editing client configs (the policy is still written)")
	fl.BoolVar(&o.Force, "force", false, "replace an existing server entry of the same name, or an existing policy file")
	fl.BoolVar(&o.Verify, "verify", false, "run `mcpsandbox verify` on the result")
	return cmd
}

// interactive: both ends are terminals (survey needs file descriptors on each).
func interactive(f *Factory) bool {
	in, ok := f.In.(*os.File)
	return ok && isTerminal(in) && isTerminal(f.Out)
}

// missingFlags lists what a non-interactive run lacks.
func missingFlags(o *InitOptions) []string {
	var m []string
	if o.A.Scheme == "" {
		m = append(m, "--scheme allowlist|docker|e2b")
	}
	if o.A.Scheme == policy.SchemeAllowlist {
		if o.A.Workspace == "" {
			m = append(m, "--workspace DIR")
		}
		if o.Allow == "" {
			m = append(m, "--allow CMD,CMD")
		}
	}
	return m
}

func runInit(ctx context.Context, o *InitOptions) error {
	env, err := generate.HostEnv(o.Project)
	if err != nil {
		return err
	}
	if env.Project == "" {
		if env.Project, err = os.Getwd(); err != nil {
			return fmt.Errorf("find the project directory: %w (give --project DIR)", err)
		}
	}
	if env.Project, err = filepath.Abs(env.Project); err != nil {
		return err
	}
	wiz := !o.Yes && interactive(o.IO)
	if !wiz && !o.Yes {
		msg := "init needs a terminal for its questions, or every answer as flags plus --yes"
		if m := missingFlags(o); len(m) > 0 {
			msg += "; missing: " + strings.Join(m, ", ")
		}
		return errors.New(msg + " (see mcpsandbox init --help)")
	}
	if !wiz {
		if m := missingFlags(o); len(m) > 0 {
			return fmt.Errorf("--yes takes every answer from flags; missing: %s", strings.Join(m, ", "))
		}
	}
	if o.Allow != "" {
		o.A.Allow = strings.Split(o.Allow, ",")
	}
	if o.PolicyOut == "" {
		o.PolicyOut = filepath.Join(env.ConfigDir, "mcpsandbox", "policy.toml")
	}
	ask := &asker{f: o.IO, on: wiz}
	if wiz {
		if err := runWizard(ctx, o, env, ask); err != nil {
			return err
		}
	}
	p, err := generate.BuildPolicy(o.A)
	if err != nil {
		return err
	}
	if interp := generate.Interpreters(p); len(interp) > 0 {
		fmt.Fprintf(o.IO.ErrOut, "warning: %s runs any code it is given: allowlisting it means arbitrary code in the workspace (it can plant git hooks there, run any script). The docker scheme is the safe way to run code.\n", strings.Join(interp, ", "))
	}
	if o.PolicyOut, err = filepath.Abs(generate.ExpandHome(o.PolicyOut, env.Home)); err != nil {
		return err
	}
	bin, err := entryBinary(o)
	if err != nil {
		return err
	}
	entry := generate.NewServerEntry(bin, o.PolicyOut)

	var changes []generate.FileChange
	pc, err := generate.PolicyChange(p, o.PolicyOut)
	if err != nil {
		return err
	}
	if pc.Existed && !pc.Unchanged() && !o.Force {
		ok, err := ask.confirm(fmt.Sprintf("%s exists. Replace it (the old one is kept as a backup)?", o.PolicyOut), false)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s already exists: pass --force to replace it (it is backed up first) or --policy-out PATH", o.PolicyOut)
		}
	}
	changes = append(changes, pc)
	var snippets []string
	for _, spec := range o.Clients {
		t, err := generate.ResolveTarget(spec, env)
		if err != nil {
			return err
		}
		if o.Print {
			snippets = append(snippets, fmt.Sprintf("# %s (%s): %s\n%s", t.Client.Name, t.Scope, t.Path, generate.Snippet(t.Client, p.Name, entry)))
			continue
		}
		c, err := generate.ClientChange(t, p.Name, entry, o.Force)
		if errors.Is(err, generate.ErrExists) {
			ok, aerr := ask.confirm(fmt.Sprintf("%s already has a server named %q. Replace it?", t.Path, p.Name), false)
			if aerr != nil {
				return aerr
			}
			if !ok {
				return fmt.Errorf("%w: pass --force to replace it, or --name to add this one beside it", err)
			}
			c, err = generate.ClientChange(t, p.Name, entry, true)
		}
		if err != nil {
			return err
		}
		changes = append(changes, c)
	}
	if wiz {
		fmt.Fprintln(o.IO.Out, "\nThese files will change:")
		for _, c := range changes {
			fmt.Fprintln(o.IO.Out)
			fmt.Fprint(o.IO.Out, c.Preview())
		}
		ok, err := ask.confirm("Write them?", true)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("nothing written")
		}
	}
	if err := prepareWorkspace(p, o.IO.ErrOut); err != nil {
		return err
	}
	done, err := generate.Apply(changes)
	w := o.IO.Out
	if o.Print { // stdout carries the snippets alone
		w = o.IO.ErrOut
	}
	for _, r := range done {
		if r.Backup != "" {
			fmt.Fprintf(w, "wrote %s (the old file is at %s)\n", r.Path, r.Backup)
		} else {
			fmt.Fprintf(w, "wrote %s\n", r.Path)
		}
	}
	if err != nil {
		return err
	}
	for _, s := range snippets {
		fmt.Fprintln(o.IO.Out, s)
	}
	if len(o.Clients) == 0 {
		fmt.Fprintf(w, "no client configured: add --client ID (%s), or add this server by hand: %s %s\n",
			strings.Join(generate.ClientIDs(), ", "), entry.Command, strings.Join(entry.Args, " "))
	}
	runV := o.Verify
	if wiz && !o.Verify {
		if runV, err = ask.confirm("Run `mcpsandbox verify` on it now (audit, host checks, and about 30s of attacks)?", true); err != nil {
			return err
		}
	}
	if runV {
		return runVerify(ctx, &VerifyOptions{IO: o.IO, PolicyPath: o.PolicyOut, MaxTimeout: 10 * time.Second})
	}
	fmt.Fprintf(w, "next: mcpsandbox verify --policy %s\n", o.PolicyOut)
	return nil
}

// entryBinary is the absolute path clients will run.
func entryBinary(o *InitOptions) (string, error) {
	bin := o.Command
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("find this binary's path: %w (give --command PATH)", err)
		}
		bin = exe
		if strings.Contains(exe, string(filepath.Separator)+"go-build") {
			fmt.Fprintln(o.IO.ErrOut, "warning: this is a temporary `go run` binary; build one (go build -o ~/bin/mcpsandbox ./cmd/mcpsandbox) and run its init, or pass --command PATH")
		}
	}
	if r, err := filepath.EvalSymlinks(bin); err == nil {
		bin = r
	}
	return filepath.Abs(bin)
}

// prepareWorkspace creates the allowlist workspace if missing. When root creates it, commands
// will run as nobody, so nobody gets to write it.
func prepareWorkspace(p *policy.Policy, log io.Writer) error {
	if p.Scheme != policy.SchemeAllowlist {
		return nil
	}
	ws := p.Allowlist.Workspace
	if _, err := os.Stat(ws); err == nil {
		return nil
	}
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return fmt.Errorf("create the workspace %s: %w", ws, err)
	}
	if os.Geteuid() == 0 && p.Allowlist.User == "" {
		if err := os.Chown(ws, 65534, 65534); err != nil {
			return fmt.Errorf("hand the workspace to nobody (commands run as 65534 under root): %w", err)
		}
	}
	fmt.Fprintf(log, "created the workspace %s\n", ws)
	return nil
}

// asker asks on the terminal when there is one, and answers "no" otherwise (flags decide).
type asker struct {
	f  *Factory
	on bool
}

func (a *asker) opts() survey.AskOpt {
	return survey.WithStdio(a.f.In.(terminal.FileReader), a.f.Out.(terminal.FileWriter), a.f.ErrOut)
}

func (a *asker) confirm(msg string, def bool) (bool, error) {
	if !a.on {
		return false, nil
	}
	v := def
	err := survey.AskOne(&survey.Confirm{Message: msg, Default: def}, &v, a.opts())
	return v, interrupted(err)
}

func interrupted(err error) error {
	if errors.Is(err, terminal.InterruptErr) {
		return errors.New("cancelled: nothing written")
	}
	return err
}

var schemeBlurb = map[string]string{
	policy.SchemeAllowlist: "pinned host binaries, kernel-confined. Isolation: strong for tools, none for code. Flexibility: low. Setup: none. Cost: free, ~7 ms a call",
	policy.SchemeDocker:    "a fresh locked-down container per call. Isolation: strong (shared kernel). Flexibility: any code. Setup: Docker. Cost: free, 50-500 ms a call",
	policy.SchemeE2B:       "E2B cloud microVMs. Isolation: strongest, off this machine. Flexibility: any code. Setup: account + API key. Cost: paid per second",
}

// runWizard asks what the flags left open.
func runWizard(ctx context.Context, o *InitOptions, env generate.Env, ask *asker) error {
	one := func(p survey.Prompt, v any, opts ...survey.AskOpt) error {
		return interrupted(survey.AskOne(p, v, append(opts, ask.opts())...))
	}
	a := &o.A
	if a.Scheme == "" {
		if err := one(&survey.Select{Message: "Which sandbox scheme?", Options: policy.Schemes, Default: policy.SchemeAllowlist,
			Description: func(v string, _ int) string { return schemeBlurb[v] }}, &a.Scheme); err != nil {
			return err
		}
	}
	switch a.Scheme {
	case policy.SchemeAllowlist:
		if !o.set("workspace") {
			def := filepath.Join(env.Home, "ai-workspace")
			if err := one(&survey.Input{Message: "Workspace (the commands' working directory, the only place they may write):", Default: def},
				&a.Workspace, survey.WithValidator(func(v any) error {
					return generate.CheckWorkspace(generate.ExpandHome(v.(string), env.Home), env.Home)
				})); err != nil {
				return err
			}
		}
		if !o.set("allow") {
			avail := generate.Available(generate.CommonTools)
			var def []string
			for _, d := range generate.DefaultCommands {
				if slices.Contains(avail, d) {
					def = append(def, d)
				}
			}
			if err := one(&survey.MultiSelect{Message: "Commands to allow (each is pinned by path and sha256):", Options: avail, Default: def,
				Description: func(v string, _ int) string {
					if policy.IsInterpreter(v) {
						return "runs any code: arbitrary code execution"
					}
					return ""
				}, PageSize: 12}, &a.Allow); err != nil {
				return err
			}
			var more string
			if err := one(&survey.Input{Message: "More commands (names or absolute paths, comma-separated; empty for none):"}, &more); err != nil {
				return err
			}
			for _, m := range strings.Split(more, ",") {
				if m = strings.TrimSpace(m); m != "" {
					a.Allow = append(a.Allow, m)
				}
			}
			var interp []string
			for _, n := range a.Allow {
				if policy.IsInterpreter(filepath.Base(n)) {
					interp = append(interp, n)
				}
			}
			if len(interp) > 0 {
				keep, err := ask.confirm(fmt.Sprintf("%s runs any code it is given: the allowlist would pin nothing. The docker scheme is the safe way to run code. Keep %s anyway?",
					strings.Join(interp, ", "), strings.Join(interp, ", ")), false)
				if err != nil {
					return err
				}
				if !keep {
					a.Allow = slices.DeleteFunc(a.Allow, func(n string) bool { return slices.Contains(interp, n) })
				}
			}
		}
		if !o.set("network") {
			if err := one(&survey.Confirm{Message: "Give commands network access? (No is strongly recommended)", Default: false}, &a.Network); err != nil {
				return err
			}
		}
	case policy.SchemeDocker:
		c := verify.DockerEngine(ctx)
		if c.OK {
			fmt.Fprintf(o.IO.Out, "Docker engine: %s\n", c.Value)
		} else {
			fmt.Fprintf(o.IO.Out, "Docker engine: %s\n  %s\n", c.Value, c.Advice)
		}
		if !o.set("image") {
			a.Image = policy.Default(policy.SchemeDocker).Docker.Image
			if err := one(&survey.Input{Message: "Image:", Default: a.Image}, &a.Image); err != nil {
				return err
			}
		}
		if c.OK {
			pull, err := ask.confirm("Pull "+a.Image+" now?", true)
			if err != nil {
				return err
			}
			if pull {
				if err := verify.PullImage(ctx, verify.DockerClient(verify.DockerSocket(), 0), a.Image, o.IO.Out); err != nil {
					fmt.Fprintf(o.IO.ErrOut, "warning: %v (calls will fail until the image is there: docker pull %s)\n", err, a.Image)
				}
			}
		}
		if !o.set("docker-workspace") {
			if err := one(&survey.Input{Message: "Host directory to mount at /workspace (empty for none):"}, &a.DockerWorkspace,
				survey.WithValidator(func(v any) error {
					if s := v.(string); s != "" {
						return generate.CheckWorkspace(generate.ExpandHome(s, env.Home), env.Home)
					}
					return nil
				})); err != nil {
				return err
			}
			if a.DockerWorkspace != "" {
				if err := one(&survey.Confirm{Message: "Mount it writable?", Default: false}, &a.DockerWorkspaceWritable); err != nil {
					return err
				}
			}
		}
		if !o.set("pool") {
			s := "0"
			if err := one(&survey.Input{Message: "Containers to keep pre-started (0-8; each serves one call):", Default: s}, &s,
				survey.WithValidator(intIn(0, 64))); err != nil {
				return err
			}
			a.Pool, _ = strconv.Atoi(s)
		}
	case policy.SchemeE2B:
		d := policy.Default(policy.SchemeE2B).E2B
		if !o.set("e2b-template") {
			a.E2BTemplate = d.Template
			if err := one(&survey.Input{Message: "E2B template:", Default: d.Template}, &a.E2BTemplate); err != nil {
				return err
			}
		}
		if !o.set("api-key-env") {
			a.APIKeyEnv = d.APIKeyEnv
			if err := one(&survey.Input{Message: "Environment variable holding your E2B API key (the key itself is never written):", Default: d.APIKeyEnv}, &a.APIKeyEnv); err != nil {
				return err
			}
		}
		if os.Getenv(a.APIKeyEnv) == "" {
			fmt.Fprintf(o.IO.Out, "note: %s is not set here; set it in the environment your MCP client starts servers with\n", a.APIKeyEnv)
		}
		if !o.set("reuse") {
			if err := one(&survey.Select{Message: "Sandbox reuse:", Options: []string{"session", "call"}, Default: d.Reuse,
				Description: func(v string, _ int) string {
					if v == "call" {
						return "a fresh sandbox for every call: nothing carries over (slower)"
					}
					return "one sandbox per MCP session: files carry over between calls"
				}}, &a.Reuse); err != nil {
				return err
			}
		}
	}
	def := policy.Default(a.Scheme).Limits
	for _, q := range []struct {
		flag, msg, def string
		dst            *string
	}{
		{"timeout", "Timeout per call:", def.Timeout.String(), &a.Timeout},
		{"max-output", "Output cap per stream:", def.MaxOutputBytes.String(), &a.MaxOutput},
		{"memory", "Memory per call:", def.Memory.String(), &a.Memory},
	} {
		if !o.set(q.flag) {
			if err := one(&survey.Input{Message: q.msg, Default: q.def}, q.dst); err != nil {
				return err
			}
		}
	}
	if !o.set("pids") {
		s := strconv.Itoa(def.Pids)
		if err := one(&survey.Input{Message: "Processes per call:", Default: s}, &s, survey.WithValidator(intIn(1, 32768))); err != nil {
			return err
		}
		a.Pids, _ = strconv.Atoi(s)
	}
	if !o.set("client") {
		detected := generate.Detect(env)
		ids := generate.ClientIDs()
		if err := one(&survey.MultiSelect{Message: "Configure which clients? (detected ones are preselected)", Options: ids, Default: detected,
			Description: func(v string, _ int) string {
				if t, err := generate.ResolveTarget(v, env); err == nil {
					return t.Path
				}
				return ""
			}, PageSize: 14}, &o.Clients); err != nil {
			return err
		}
	}
	if !o.set("policy-out") {
		if err := one(&survey.Input{Message: "Write the policy to:", Default: o.PolicyOut}, &o.PolicyOut); err != nil {
			return err
		}
	}
	return nil
}

func intIn(lo, hi int) survey.Validator {
	return func(v any) error {
		n, err := strconv.Atoi(strings.TrimSpace(v.(string)))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("give a whole number from %d to %d", lo, hi)
		}
		return nil
	}
}
