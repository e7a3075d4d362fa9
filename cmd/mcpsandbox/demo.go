package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// DemoOptions are demo's flags.
type DemoOptions struct {
	IO        *Factory
	Workspace string
	Keep      bool
}

// NewCmdDemo builds `demo`: the built-in allowlist policy, driven over MCP stdio like a client.
func NewCmdDemo(f *Factory, runF func(context.Context, *DemoOptions) error) *cobra.Command {
	o := &DemoOptions{IO: f}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the built-in allowlist sandbox and show allowed and refused calls (no config needed)",
		Long: "demo spawns `mcpsandbox serve --default` as a real MCP server over stdio, exactly as an AI client\n" +
			"would, prints the isolation layers this host enforces, then makes a few allowed and hostile calls.",
		Example: "  mcpsandbox demo\n  mcpsandbox demo --workspace /tmp/ws --keep",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runDemo(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.Workspace, "workspace", "", "workspace directory (default: a new temporary one)")
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "keep the temporary workspace")
	return cmd
}

func runDemo(ctx context.Context, o *DemoOptions) error {
	out := o.IO.Out
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this binary: %w", err)
	}
	ws := o.Workspace
	if ws == "" {
		if ws, err = os.MkdirTemp("", "mcpsandbox-demo-"); err != nil {
			return fmt.Errorf("create demo workspace: %w", err)
		}
		if !o.Keep {
			defer os.RemoveAll(ws)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("pear\napple\nfig\napple\n"), 0o644); err != nil {
		return fmt.Errorf("write demo file: %w", err)
	}
	if os.Geteuid() == 0 {
		_ = os.Chown(ws, 65534, 65534)
		_ = os.Chown(filepath.Join(ws, "notes.txt"), 65534, 65534)
	}
	state, err := os.MkdirTemp("", "mcpsandbox-demo-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)

	check := exec.CommandContext(ctx, self, "serve", "--default", "--workspace", ws, "--check", "--log-level", "warn") // the table, not serve's start-up log
	check.Stdout, check.Stderr = out, o.IO.ErrOut
	if err := check.Run(); err != nil {
		return fmt.Errorf("serve --check: %w", err)
	}

	srv := exec.CommandContext(ctx, self, "serve", "--default", "--workspace", ws, "--log-level", "warn")
	srv.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	srv.Stderr = o.IO.ErrOut
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpsandbox-demo", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: srv}, nil)
	if err != nil {
		return fmt.Errorf("connect to serve: %w", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	for _, t := range tools.Tools {
		fmt.Fprintf(out, "\ntool %s: %s\n", t.Name, t.Description)
	}
	calls := []struct {
		what    string
		cmd     string
		args    []string
		refused bool
	}{
		{"count lines, words, bytes", "wc", []string{"notes.txt"}, false},
		{"sort uniquely", "sort", []string{"-u", "notes.txt"}, false},
		{"shell metacharacters are literal", "cat", []string{"notes.txt; cat /etc/passwd"}, false},
		{"read a host file", "cat", []string{"/etc/passwd"}, true},
		{"escape with ../", "cat", []string{"../../etc/passwd"}, true},
		{"smuggle a path in an option", "wc", []string{"--files0-from=/etc/passwd"}, true},
		{"run something not allowlisted", "bash", []string{"-c", "id"}, true},
	}
	bad := 0
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": c.cmd, "args": c.args}})
		if err != nil {
			return fmt.Errorf("tools/call: %w", err)
		}
		verdict := "ran"
		if res.IsError {
			verdict = "REFUSED"
		}
		if res.IsError != c.refused {
			bad++
			verdict += " (unexpected!)"
		}
		argv, _ := json.Marshal(c.args)
		fmt.Fprintf(out, "\n== %s: %s %s -> %s\n", c.what, c.cmd, argv, verdict)
		for _, ct := range res.Content {
			if tc, ok := ct.(*mcp.TextContent); ok {
				fmt.Fprintln(out, "   "+strings.ReplaceAll(strings.TrimRight(tc.Text, "\n"), "\n", "\n   "))
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("%d demo calls did not behave as the policy says", bad)
	}
	fmt.Fprintln(out, "\nEvery call behaved as the policy says. Next:")
	if strings.Contains(self, "go-build") { // `go run`: that binary is gone when the demo exits
		fmt.Fprintln(out, "  "+BuildCommand)
		self = "~/bin/mcpsandbox"
	} else {
		self = commandName(self) // the bare name when PATH's mcpsandbox is this binary, as init says (trial36 F10)
	}
	fmt.Fprintf(out, "  %s init               # write your policy and your MCP client's entry\n", self)
	fmt.Fprintf(out, "  %s harness --default  # attack the built-in policy with every scenario\n", self)
	return nil
}

// BuildCommand is how README builds the binary a client entry can run (static, so it runs
// wherever the client starts it): the demo's and init's advice say the same (trial30 F3).
const BuildCommand = "CGO_ENABLED=0 go build -o ~/bin/mcpsandbox ./cmd/mcpsandbox"
