package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
)

// WrapOptions are wrap's flags.
type WrapOptions struct {
	IO             *Factory
	PolicyPath     string
	ExplainDenials bool
	LogLevel       string
	Command        []string // after --
}

// NewCmdWrap builds `wrap`; runF replaces the run function in tests.
func NewCmdWrap(f *Factory, runF func(context.Context, *WrapOptions) error) *cobra.Command {
	o := &WrapOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "wrap --policy FILE [--explain-denials] [-- COMMAND ARGS…]",
		Short: "Run another stdio MCP server inside the sandbox, relaying and auditing its traffic",
		Long: "wrap starts the MCP server COMMAND (or the policy's [wrap].command) under the allowlist scheme's\n" +
			"kernel layers and relays MCP on stdin/stdout unchanged (nothing else is ever written to stdout).\n" +
			"Every tools/call is audited; the policy's [wrap.tools] rules refuse calls, naming the rule.",
		Example: `  mcpsandbox wrap --policy ~/.config/mcpsandbox/everything.toml -- npx -y @modelcontextprotocol/server-everything
  mcpsandbox wrap --policy fs.toml --explain-denials -- npx -y @modelcontextprotocol/server-filesystem /home/me/notes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.PolicyPath == "" {
				return fmt.Errorf("give --policy FILE (a policy with a [wrap] section; see README \"Wrap another MCP server\")")
			}
			if cmd.ArgsLenAtDash() > 0 {
				return fmt.Errorf("put the server's command after `--`: mcpsandbox wrap --policy FILE -- %s", args[0])
			}
			o.Command = args
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runWrap(cmd.Context(), o)
		},
	}
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		err = suggestFlag(cmd, err)
		if strings.HasPrefix(err.Error(), "unknown ") && !strings.Contains(err.Error(), "did you mean") {
			// `wrap --policy P npx -y srv`: the server's own flags are read as wrap's (trial35 F11)
			return fmt.Errorf("%w; if it is the server's, put the server's command after `--`: mcpsandbox wrap --policy FILE -- COMMAND ARGS…", err)
		}
		return err
	})
	cmd.Flags().StringVarP(&o.PolicyPath, "policy", "p", "", "the wrap policy (TOML, version 1)")
	cmd.Flags().BoolVar(&o.ExplainDenials, "explain-denials", false, "log every refused call and denied host to stderr, so the policy can be widened knowingly")
	cmd.Flags().StringVar(&o.LogLevel, "log-level", "info", "stderr log level: debug, info, warn, error")
	return cmd
}

func runWrap(ctx context.Context, o *WrapOptions) error {
	surviveBrokenPipes()
	p, err := policy.Load(o.PolicyPath)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) && errors.Is(err, fs.ErrNotExist) {
		// not policy.Load's advice (init): init writes wrap policies only with --wrap, for
		// servers already in a client's config
		return fmt.Errorf("wrap policy %s: %w: write one (scheme = \"wrap\"; README \"Wrap another MCP server\" shows every key), "+
			"or add the server to a client's config and run `mcpsandbox init --wrap NAME`, which writes its policy and proves it "+
			"(an entry wrapped already whose policy is gone: `mcpsandbox init --wrap NAME` wraps it anew, `mcpsandbox init --unwrap NAME --force` takes it out of wrap)", pe.Path, pe.Err)
	}
	if err != nil {
		return err
	}
	sc, err := schemes.For(p)
	if err != nil {
		return err
	}
	if sc.Relay == nil {
		return fmt.Errorf("%s is not a wrap policy (its scheme is %s): wrap needs a policy whose scheme relays another server (run this one with `mcpsandbox serve --policy %s`)", o.PolicyPath, p.Scheme, o.PolicyPath)
	}
	// info, as serve's: the start line and each refused call in the client's log (trial39 F11)
	return sc.Relay(ctx, p, scheme.RelayOptions{Command: o.Command, ExplainDenials: o.ExplainDenials,
		Stdin: o.IO.In, Stdout: o.IO.Out, Stderr: o.IO.ErrOut, Logger: newLogger(o.IO.ErrOut, o.LogLevel)})
}
