package main

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/internal/serve"
	"github.com/spf13/cobra"
)

// NewCmdRoot builds the command tree.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "mcpsandbox",
		Short:         "Run AI clients' commands through MCP without handing them the machine",
		Long:          "mcpsandbox serves a sandbox policy as an MCP server (allowlist, docker or e2b scheme),\nwrites client configs, and attacks its own server to prove the policy holds.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Example: `  mcpsandbox demo                                  # see the built-in allowlist sandbox at work
  mcpsandbox init                                  # write a policy and your clients' config
  mcpsandbox verify --policy ~/.config/mcpsandbox/policy.toml   # audit, host checks, attack it
  mcpsandbox serve --policy ~/.config/mcpsandbox/policy.toml
  mcpsandbox serve --policy policy.toml --check    # which isolation layers this host enforces`,
	}
	root.SetOut(f.Out)
	root.SetErr(f.ErrOut)
	root.SetFlagErrorFunc(suggestFlag) // every subcommand inherits it
	root.AddCommand(NewCmdInit(f, nil), NewCmdServe(f, nil), NewCmdVerify(f, nil), NewCmdHarness(f, nil), NewCmdExplain(f, nil),
		NewCmdDemo(f, nil), NewCmdAudit(f), NewCmdVersion(f), NewCmdWrap(f, nil))
	return root
}

// NewCmdVersion prints the version.
func NewCmdVersion(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "Print the version", Args: cobra.NoArgs, Example: "  mcpsandbox version",
		Run: func(*cobra.Command, []string) { fmt.Fprintln(f.Out, "mcpsandbox", serve.Version) },
	}
}
