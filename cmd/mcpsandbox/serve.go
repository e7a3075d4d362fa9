package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/scheme"
	"github.com/mcpsandbox/mcpsandbox/serve"
	"github.com/mcpsandbox/mcpsandbox/serve/audit"
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
}

// NewCmdServe builds `serve`; runF replaces the run function in tests.
func NewCmdServe(f *Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	o := &ServeOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a policy as an MCP server over stdio",
		Long: "serve speaks MCP on stdin/stdout (nothing else is ever written to stdout) and logs to stderr.\n" +
			"Every call is checked against the policy, confined, and written to the audit log.",
		Example: `  mcpsandbox serve --policy ~/.config/mcpsandbox/policy.toml
  mcpsandbox serve --policy policy.toml --check          # print the isolation layers in force, then exit
  mcpsandbox serve --default --workspace ~/ai-workspace  # the built-in allowlist policy, no file needed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := sourceOf(o.PolicyPath, o.Default).check(true); err != nil {
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
	return cmd
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

func runServe(ctx context.Context, o *ServeOptions) error {
	log := newLogger(o.IO.ErrOut, o.LogLevel)
	p, sc, cleanup, err := sourceOf(o.PolicyPath, o.Default).load(o.Workspace)
	defer cleanup()
	if err != nil {
		return err
	}
	ex, err := sc.NewExecutor(p, scheme.ExecOptions{Logger: log})
	if err != nil {
		return err
	}
	defer ex.Close()
	if o.Check {
		if err := ex.Ready(); err != nil {
			return err
		}
		return printLayers(o.IO.Out, p, ex.Layers(), o.JSON)
	}
	path := p.Audit.Path
	if path == "" {
		if path, err = audit.DefaultPath(); err != nil {
			return err
		}
	}
	al, err := audit.Open(path, os.Environ())
	if err != nil {
		return err
	}
	defer al.Close()
	log.Info("serving", "name", p.Name, "scheme", p.Scheme, "policy_hash", p.Hash()[:16], "audit", path, "workspace", p.Allowlist.Workspace)
	if isTerminal(os.Stdin) {
		log.Info("waiting for an MCP client on stdin (this is a server: start it from a client's config, or try `mcpsandbox demo`)")
	}
	return serve.Run(ctx, p, ex, serve.Options{Audit: al, Logger: log})
}

func printLayers(w io.Writer, p *policy.Policy, ls []serve.Layer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"scheme": p.Scheme, "policy_hash": p.Hash(), "layers": ls})
	}
	fmt.Fprintf(w, "policy %q, scheme %s, hash %.16s\n\n", p.Name, p.Scheme, p.Hash())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tIN FORCE\tDETAIL")
	for _, l := range ls {
		mark := "yes"
		if !l.Active {
			mark = "NO"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Name, mark, l.Detail)
	}
	return tw.Flush()
}
