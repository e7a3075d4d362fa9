// Package allowlist is the allowlist scheme's entry in the registry: hardened host exec of
// pinned binaries (the executor is internal/schemes/allowlist/sandbox), with its threats, audit rules, harness
// adapter and negative controls.
package allowlist

import (
	"fmt"
	"os"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Rules are the allowlist scheme's audit rules.
var Rules = []verify.Rule{
	{ID: "MS101", Severity: verify.High, Title: "an interpreter or program runner is allowlisted: arbitrary code"},
	{ID: "MS102", Severity: verify.High, Title: "an allowlisted binary, or a directory above it, is writable by someone other than root"},
	{ID: "MS103", Severity: verify.High, Title: "an allowlisted binary is missing or no longer matches its pinned sha256"},
	{ID: "MS104", Severity: verify.High, Title: "allowlist.env passes a secret-looking variable to commands"},
	{ID: "MS105", Severity: verify.High, Title: "the workspace is, or contains, a home directory or a system directory, or lies in a home's dot directory or an XDG directory"},
	{ID: "MS106", Severity: verify.Medium, Title: "the workspace is world-writable"},
	{ID: "MS107", Severity: verify.Medium, Title: "allowlist network = true"},
	{ID: "MS108", Severity: verify.Medium, Title: "allow_outside_paths lets a command's path arguments leave the workspace"},
	{ID: "MS109", Severity: verify.Medium, Title: "read_paths exposes a home or secrets directory"},
	{ID: "MS110", Severity: verify.Medium, Title: "a command lacks the deny_args its dangerous options need"},
	{ID: "MS111", Severity: verify.High, Title: "the workspace does not exist"},
	{ID: "MS112", Severity: verify.Medium, Title: "a read path another local user can create or replace"},
	{ID: "MS113", Severity: verify.Low, Title: "under root, the workspace is not the sandbox user's to write"},
	{ID: "MS114", Severity: verify.High, Title: "an allowlisted command is not an ELF binary (a script): serve refuses to start"},
	{ID: "MS115", Severity: verify.High, Title: "read_paths opens a host kernel view (/proc, /sys, /dev, /run, or / holding them): the host's processes and their command lines"},
	{ID: "MS116", Severity: verify.High, Title: "allowlist.env points a variable into the workspace: a file a call writes steers the pinned programs"},
}

// Scheme is the registry entry.
var Scheme = &scheme.Scheme{
	Name:          alsec.Name,
	Summary:       "pinned host binaries, hardened exec (Landlock, seccomp, namespaces, rlimits); Linux",
	Executor:      newExecutor(),
	Unavailable:   sa.Unavailable,
	Layers:        sa.LayerIDs,
	Threats:       threats,
	Audit:         verify.Auditor{Rules: Rules, Check: audit},
	Adapter:       adapter{},
	Controls:      controls,
	ControlPolicy: controlPolicy,
	Default:       defaultWithCleanup,
	Measured:      verify.MeasuredLayers,
	Host:          hostChecks,
	Bounds:        bounds,
	Proof:         proof,
	Wizard:        wizard,
	Bench:         benchRows,
}

// bounds: a host list's proxy is one per call; connections past the bound wait for the call's
// own to end (no other call shares them).
func bounds(p *policy.Policy) []verify.Bound {
	bs := verify.WorkspaceBounds(p.Limits)
	if p.Limits.MaxFileBytes > 0 {
		bs = append(bs, verify.FileBounds(p.Limits)...)
	}
	if alsec.Of(p).Net().Mode != policy.NetHosts {
		return bs
	}
	return append(bs, verify.EgressBounds(p.Limits, "call", "more wait until one of the call's own ends")...)
}

func newExecutor() func(*policy.Policy, scheme.ExecOptions) (executor.Executor, error) {
	if sa.Unavailable != "" {
		return nil
	}
	return func(p *policy.Policy, o scheme.ExecOptions) (executor.Executor, error) {
		return sa.New(p, sa.Options{Logger: o.Logger, DeferProbe: o.DeferStart})
	}
}

// defaultWithCleanup is Default, and the removal of the temporary workspace it made (if any).
func defaultWithCleanup(workspace string) (*policy.Policy, func(), error) {
	p, err := Default(workspace)
	if err != nil || workspace != "" {
		return p, func() {}, err
	}
	ws := alsec.Of(p).Workspace
	return p, func() { os.RemoveAll(ws) }, nil
}

// Default is the built-in policy: the common text tools present on this host, pinned now, no
// network, over workspace (or a fresh temporary directory handed to nobody when serve is root).
func Default(workspace string) (*policy.Policy, error) {
	if workspace == "" {
		d, err := os.MkdirTemp("", "mcpsandbox-workspace-")
		if err != nil {
			return nil, fmt.Errorf("create a workspace: %w (give --workspace DIR)", err)
		}
		if os.Geteuid() == 0 {
			_ = os.Chown(d, 65534, 65534) // root runs commands as nobody: let nobody write its workspace
		}
		workspace = d
	}
	return builtIn(workspace)
}

// builtIn is the built-in policy over workspace: the default commands present on this host,
// pinned now, with no network.
func builtIn(workspace string) (*policy.Policy, error) {
	cs, err := generate.PinDefaults()
	if err != nil {
		return nil, err
	}
	p := policy.Default(alsec.Name)
	alsec.Of(p).Workspace, alsec.Of(p).Commands = workspace, cs
	return p, p.Validate()
}
