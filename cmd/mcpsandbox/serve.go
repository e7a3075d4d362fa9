package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/mutant"
	"github.com/mcpsandbox/mcpsandbox/internal/projectpolicy"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/serve"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/internal/tomlbound"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
)

// ServeOptions are serve's flags.
type ServeOptions struct {
	IO         *Factory
	PolicyPath string
	Default    bool
	Workspace  string // with --default
	Check      bool
	JSON       bool
	LogLevel   string
	HTTP       string   // streamable HTTP address instead of stdio
	TokenFile  string   // bearer token for --http (else MCPSANDBOX_TOKEN)
	Origins    []string // extra allowed Origin values for --http
	Project    bool     // --project [DIR]: this user's own policy for the checkout at DIR
	ProjectDir string   // DIR ("" = the working directory)
}

// NewCmdServe builds `serve`; runF replaces the run function in tests.
func NewCmdServe(f *Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	o := &ServeOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a policy as an MCP server over stdio, or over HTTP with --http",
		Long: "serve speaks MCP on stdin/stdout (nothing else is ever written to stdout), or streamable HTTP with --http, and logs to stderr.\n" +
			"Every call is checked against the policy, confined, and written to the audit log.",
		Example: `  mcpsandbox serve --policy ~/.config/mcpsandbox/policy.toml
  mcpsandbox serve --policy policy.toml --check          # print the isolation layers in force, then exit
  mcpsandbox serve --default --workspace ~/ai-workspace  # the built-in allowlist policy, no file needed
  MCPSANDBOX_TOKEN=$(cat ~/.config/mcpsandbox/token) mcpsandbox serve --policy policy.toml --http 0.0.0.0:8765
  mcpsandbox serve --project                         # your own policy for the checkout here (init --portable wrote it)`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Project {
				return cobra.MaximumNArgs(1)(cmd, args)
			}
			return cobra.NoArgs(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Project {
				if o.PolicyPath != "" || o.Default || o.Workspace != "" {
					return errors.New("--project finds your own policy for the checkout: give it without --policy, --default or --workspace")
				}
				if len(args) == 1 {
					o.ProjectDir = args[0]
				}
			} else if err := sourceOf(o.PolicyPath, o.Default).check(true); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runServe(cmd.Context(), o)
		},
	}
	policyFlags(cmd, &o.PolicyPath, &o.Default, "serve")
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace for --default (default: a new temporary directory)")
	cmd.Flags().BoolVar(&o.Check, "check", false, "print which isolation layers are in force on this host, then exit")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "with --check: print JSON")
	cmd.Flags().StringVar(&o.LogLevel, "log-level", "info", "stderr log level: debug, info, warn, error")
	cmd.Flags().StringVar(&o.HTTP, "http", "", "serve streamable HTTP on `HOST:PORT` at /mcp instead of stdio (loopback unless a token is set)")
	cmd.Flags().StringVar(&o.TokenFile, "token-file", "", "with --http: file holding the bearer token (mode 0600); default $MCPSANDBOX_TOKEN")
	cmd.Flags().BoolVar(&o.Project, "project", false, "serve your own policy for the checkout at DIR (an argument; default: the working directory, or the nearest directory above it that has one, up to its repository's top), which init --portable wrote under your config directory, never one inside the checkout")
	cmd.Flags().StringSliceVar(&o.Origins, "allow-origin", nil, "with --http: an extra browser Origin to accept (scheme://host:port)")
	return cmd
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(serve.LimitLog(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l, ReplaceAttr: serve.ClipLogAttr})))
}

func runServe(ctx context.Context, o *ServeOptions) error {
	serve.QuietStart() // no collection on the way to the first answers
	surviveBrokenPipes()
	log := newLogger(o.IO.ErrOut, o.LogLevel)
	if w := egress.StandInsWarning(); w != "" {
		log.Warn(w) // a test hook: the harness sets it for its own runs
	}
	var token string
	if o.HTTP != "" { // refuse a bad address or an open bind before anything starts
		t, err := httpToken(o.TokenFile)
		if err != nil {
			return err
		}
		token = t
		if err := serve.CheckHTTPBind(o.HTTP, token); err != nil {
			return err
		}
	}
	p, sc, cleanup, err := servedPolicy(o)
	defer cleanup()
	if err != nil {
		return err
	}
	if err := checkReplaceable(o, p); err != nil {
		return err
	}
	if sc.Relay != nil && !o.Check { // a policy that wraps another server: serve is that relay
		if o.HTTP != "" {
			return fmt.Errorf("a %s policy relays another server over stdio: drop --http", p.Scheme)
		}
		if err := checkSelf(o, p); err != nil {
			return err
		}
		return sc.Relay(ctx, p, scheme.RelayOptions{Stdin: o.IO.In, Stdout: o.IO.Out, Stderr: o.IO.ErrOut, Logger: log})
	}
	path := p.Audit.Path
	if path == "" {
		if path, err = audit.DefaultPath(); err != nil {
			return err
		}
	}
	// over stdio, serve.Run begins the executor's deferred start-up after the first answers
	ex, err := sc.NewExecutor(p, scheme.ExecOptions{Logger: log, DeferStart: o.HTTP == "" && !o.Check})
	if err != nil {
		return err
	}
	defer ex.Close()
	// after the scheme's own judgement of the workspace (a system directory is refused as such)
	if err := checkOwnPlaces(o, p, path); err != nil {
		return err
	}
	if o.Check {
		return serveCheck(o, p, ex)
	}
	// what the scheme needs from outside (docker's engine), judged before "serving" is said: the
	// start-up, which would find out, runs after the client's first answers, and serve ending
	// then left a client "connected" with no tools, the reason only in its log (trial35 F7)
	if rc, ok := ex.(interface{ Reachable(context.Context) error }); ok && !mutated("serve-engine-unchecked") {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := rc.Reachable(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("not serving: %w", err)
		}
	}
	al, err := audit.Open(path, os.Environ())
	if err != nil {
		return err
	}
	defer al.Close()
	if note := al.ReserveNote(); note != "" {
		log.Warn(note)
	}
	if s, ok := ex.(interface{ SetAudit(*audit.Log) }); ok {
		s.SetAudit(al) // egress proxy decisions (network host lists) join the call log
	}
	setUp(al, p)
	// writable as measured for the calls' user, not only as the policy says: a root-owned
	// workspace was logged writable while every write failed (trial48 F2)
	unwritable, fix := unwritableWorkspace(p, ex)
	if log.Enabled(ctx, slog.LevelInfo) { // the hash is work (the policy encoded and hashed): only when it is logged
		attrs := []any{"name", p.Name, "scheme", p.Scheme, "policy_hash", p.Hash()[:16], "audit", path}
		if ws, writable := p.WorkspaceMount(); ws != "" { // e2b's is the remote sandbox's: none here (trial33 F13)
			attrs = append(attrs, "workspace", ws, "workspace_writable", writable && unwritable == "")
		}
		log.Info("serving", attrs...)
	}
	if unwritable != "" {
		log.Warn(unwritable, "fix", fix)
	}
	// init's check starts serve with the origin mark: the calls of its own client are marked so
	// in the audit (serve.OriginEnv says why a client's config cannot hide calls with it)
	so := serve.Options{Audit: al, Logger: log, Origin: os.Getenv(serve.OriginEnv)}
	if o.HTTP != "" {
		so.HTTP = &serve.HTTPOptions{Addr: o.HTTP, Token: token, Origins: o.Origins}
	} else if isTerminal(os.Stdin) {
		log.Info("waiting for an MCP client on stdin (this is a server: start it from a client's config, or try `mcpsandbox demo`)")
	}
	return serve.Run(ctx, p, ex, so)
}

// checkReplaceable refuses to serve what someone else, or a sandboxed call, could replace: the
// policy file (serve's own executable is checkSelf's, after the scheme has judged the workspace).
func checkReplaceable(o *ServeOptions, p *policy.Policy) error {
	// every scheme's policy decides what runs (docker's image and mounts, e2b's template, not
	// only allowlist's commands): one another user may replace is refused for each (atk33 F9)
	if p.File != "" && !mutated("serve-policy-owned-any-scheme") {
		if err := policy.CheckFileSafe(p.File); err != nil {
			return fmt.Errorf("refusing to serve: %w", err)
		}
	}
	return nil
}

// checkOwnPlaces refuses serve's executable, policy file and audit log where sandboxed calls
// write (or, the log, read): judged after the scheme has judged the workspace.
func checkOwnPlaces(o *ServeOptions, p *policy.Policy, auditPath string) error {
	if err := checkSelf(o, p); err != nil {
		return err
	}
	if err := policy.CheckOwnFiles(p.WorkspaceDir(), p.File, auditPath); err != nil {
		return err
	}
	if key, dirs := p.ReadDirs(); len(dirs) > 0 {
		return policy.CheckAuditNotReadIn(dirs, key, auditPath)
	}
	return nil
}

// selfExecutable is serve's own executable (tests set it).
var selfExecutable = os.Executable

// checkSelf refuses to serve from an executable a sandboxed call could replace, inside the
// policy's workspace (for --project, the checkout), and, for --project (the committed entry
// runs `mcpsandbox` by name), with a PATH whose entries ahead of the mcpsandbox found a call
// could fill (atk39b F2): the client's next start would run the call's program, unsandboxed.
// Whatever started this serve (a program a call wrote there may have started the real one by
// its path), the client's next start looks mcpsandbox up on this PATH.
func checkSelf(o *ServeOptions, p *policy.Policy) error {
	exe, err := selfExecutable()
	if err != nil {
		return fmt.Errorf("refusing to serve: cannot tell where this mcpsandbox is (%w), so not whether a sandboxed call could replace it", err)
	}
	if err := projectpolicy.CheckExecutable(exe, p.WorkspaceDir()); err != nil {
		return err
	}
	if !o.Project {
		return nil // the per-member entry names mcpsandbox by its path: PATH plays no part
	}
	if risky, found := projectpolicy.PathAhead(os.Getenv("PATH"), generate.PortableCommand, p.WorkspaceDir()); len(risky) > 0 {
		return fmt.Errorf("refusing to serve: %w", projectpolicy.PathAheadError("serve --project", risky, found, "start the client again"))
	}
	return nil
}

// servedPolicy loads the policy serve runs: --policy, --default, or with --project this user's
// own policy for the checkout (the committed portable entry), whose workspace must be it.
func servedPolicy(o *ServeOptions) (*policy.Policy, *scheme.Scheme, func(), error) {
	if !o.Project {
		return sourceOf(o.PolicyPath, o.Default).load(o.Workspace)
	}
	env, err := generate.HostEnv("")
	if err != nil {
		return nil, nil, func() {}, err
	}
	dir := o.ProjectDir
	if dir == "" {
		dir = "."
	}
	file, checkout, err := projectpolicy.Find(env.ConfigDir, dir)
	if err != nil {
		return nil, nil, func() {}, err
	}
	o.PolicyPath = file
	p, sc, cleanup, err := sourceOf(file, false).load("")
	if err == nil {
		err = projectpolicy.CheckWorkspace(p, file, checkout)
	}
	return p, sc, cleanup, err
}

// minTokenLen is the shortest bearer token --http accepts (after trimming white space).
const minTokenLen = 16

// maxTokenFile is the most of --token-file serve reads (a token is one line).
const maxTokenFile = 4096

// mutated: a mechanism switched off by `make mutants`; the constant false in a release build.
func mutated(name string) bool { return mutant.On(name) }

// httpToken reads the bearer token from --token-file, or $MCPSANDBOX_TOKEN. A token file others
// can read, or another user could have written, is refused, as ssh refuses a loose key.
func httpToken(file string) (string, error) {
	if file != "" && os.Getenv("MCPSANDBOX_TOKEN") != "" {
		return "", errors.New("both MCPSANDBOX_TOKEN and --token-file are set: give one, so it is clear which token clients need")
	}
	if file == "" {
		t := strings.TrimSpace(os.Getenv("MCPSANDBOX_TOKEN"))
		if t != "" && len(t) < minTokenLen && !mutated("token-length") {
			return "", fmt.Errorf("MCPSANDBOX_TOKEN is shorter than %d characters: use e.g. `openssl rand -hex 32`", minTokenLen)
		}
		return t, nil
	}
	st, err := os.Stat(file)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 && !mutated("token-file-mode") {
		return "", fmt.Errorf("--token-file %s is readable by others (mode %v): chmod 600 %s", file, st.Mode().Perm(), file)
	}
	// the owner and every directory above it, as for the policy file: whoever may replace it
	// chooses the token (atk33 F9)
	if err := policy.CheckTokenFileSafe(file); err != nil && !mutated("token-file-owned") {
		return "", fmt.Errorf("refusing to serve: %w", err)
	}
	// a FIFO would hold serve's start forever, a huge file its memory: a token is a line
	read := func() ([]byte, error) { return tomlbound.ReadRegular(file, maxTokenFile) }
	if mutated("token-file-bounded") {
		read = func() ([]byte, error) { return os.ReadFile(file) }
	}
	b, err := read()
	if errors.Is(err, tomlbound.ErrNotRegular) {
		return "", fmt.Errorf("--token-file %s: %w: give a regular file holding the token (chmod 600)", file, err)
	}
	if err != nil {
		return "", fmt.Errorf("--token-file %s: %w", file, err)
	}
	t := strings.TrimSpace(string(b))
	if len(t) < minTokenLen && !mutated("token-length") {
		return "", fmt.Errorf("--token-file %s holds a token shorter than %d characters: use e.g. `openssl rand -hex 32 > %s`", file, minTokenLen, file)
	}
	return t, nil
}

// serveCheck is --check: the layers in force, once the executor is ready. What serve lacks here
// (e2b's key) leaves the layers known: they are reported, then the error (exit 1), so explain can
// explain the policy all the same (trial37 F6).
func serveCheck(o *ServeOptions, p *policy.Policy, ex executor.Executor) error {
	if err := ex.Ready(); err != nil {
		var unmet *executor.UnmetError
		if errors.As(err, &unmet) && !mutated("explain-refuses-unmet") {
			if perr := printLayers(o.IO.Out, p, ex, o.JSON, unmet); perr != nil {
				return perr
			}
		}
		return err
	}
	return printLayers(o.IO.Out, p, ex, o.JSON, nil)
}

// unwritableWorkspace is why the calls' user may not create files in a workspace the policy
// makes writable, and the fix, as the executor measures it ("": they may, or nothing to say).
func unwritableWorkspace(p *policy.Policy, ex executor.Executor) (why, fix string) {
	// wrap.write's directories are what a wrapped server writes (trial49 F4)
	if _, writable := p.WorkspaceMount(); !writable && len(p.WriteDirs()) == 0 {
		return "", ""
	}
	if c, ok := ex.(executor.WorkspaceChecker); ok {
		return c.WorkspaceUnwritable()
	}
	return "", ""
}

func printLayers(w io.Writer, p *policy.Policy, ex executor.Executor, asJSON bool, unmet *executor.UnmetError) error {
	ls := ex.Layers()
	why, fix := unwritableWorkspace(p, ex)
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		v := map[string]any{"scheme": p.Scheme, "policy_hash": p.Hash(), "layers": ls}
		if unmet != nil {
			v["not_ready"] = verify.NotReady{Until: unmet.Until, Why: unmet.Error()}
		}
		if why != "" {
			v["workspace_unwritable"] = map[string]string{"why": why, "fix": fix}
		}
		return enc.Encode(v)
	}
	fmt.Fprintf(w, "policy %q, scheme %s, hash %.16s\n\n", p.Name, p.Scheme, p.Hash())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tIN FORCE\tDETAIL")
	for _, l := range ls {
		mark := "yes"
		switch {
		case l.NotNeeded:
			mark = "not needed"
		case !l.Active:
			mark = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Name, mark, l.Detail)
	}
	if err := tw.Flush(); err != nil || why == "" {
		return err
	}
	fmt.Fprintf(w, "\nwarning: %s\n", why)
	if fix != "" {
		fmt.Fprintf(w, "  fix: %s\n", fix)
	}
	return nil
}
