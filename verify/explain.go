package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve"
)

// Status says how well a threat is covered.
type Status string

// The statuses.
const (
	Enforced    Status = "enforced"
	Partly      Status = "partly"
	NotEnforced Status = "NOT enforced"
)

// Threat is one line of `explain`: what an attacker wants, and what on this host stops it.
type Threat struct {
	Threat    string   `json:"threat"`
	Status    Status   `json:"status"`
	By        []string `json:"by"`
	Note      string   `json:"note,omitempty"`
	Scenarios []string `json:"scenarios"` // the harness scenarios that attack it
}

type threatRule struct {
	threat    string
	layers    []string                    // any active one enforces it
	server    bool                        // enforced by serve itself, whatever the host
	caveat    string                      // enforced, but only partly
	gap       func(*policy.Policy) string // a policy choice that undoes it
	scenarios []string
}

func interpreterIn(p *policy.Policy) string {
	for _, c := range p.Allowlist.Commands {
		if policy.IsInterpreter(c.Name) {
			return c.Name
		}
	}
	return ""
}

var allowlistThreats = []threatRule{
	{threat: "run a program that is not pinned", layers: []string{"pinned exec", "landlock: filesystem"},
		gap: func(p *policy.Policy) string {
			if n := interpreterIn(p); n != "" {
				return fmt.Sprintf("%q is allowlisted and runs any code it is given", n)
			}
			return ""
		}, scenarios: []string{"planted-binary", "planted-binary-exec", "planted-script-interpreter", "compress-program", "ld-preload"}},
	{threat: "read host files outside the workspace", layers: []string{"landlock: filesystem"},
		gap: func(p *policy.Policy) string {
			if len(p.Allowlist.ReadPaths) > 0 {
				return "read_paths opens " + strings.Join(p.Allowlist.ReadPaths, ", ")
			}
			return ""
		}, scenarios: []string{"read-ssh-key-absolute", "read-canary-dotdot", "read-via-diff", "grep-home-recursive", "read-secrets-python", "symlink-planted", "symlink-two-calls", "hardlink-canary", "argument-injection"}},
	{threat: "write, truncate or delete outside the workspace", layers: []string{"landlock: filesystem"},
		scenarios: []string{"write-outside-sort", "write-outside-uniq", "write-outside-python", "rc-files-home", "rc-files-python", "cross-call-leak"}},
	{threat: "plant code the host runs later (git hooks and config, editor tasks, .envrc) in the workspace", server: true,
		gap: func(p *policy.Policy) string {
			if n := interpreterIn(p); n != "" {
				return fmt.Sprintf("%q can write .git/hooks: the kernel cannot fence off parts of the writable workspace", n)
			}
			return ""
		}, scenarios: []string{"git-hooks-argv", "git-hooks-python"}},
	{threat: "reach the network (TCP, UDP, DNS, cloud metadata, the internet)", layers: []string{"network namespace", "seccomp"},
		gap: func(p *policy.Policy) string {
			if p.Allowlist.Network {
				return "network = true"
			}
			return ""
		}, scenarios: []string{"tcp-exfil-loopback", "udp-exfil-loopback", "dns-exfil", "reverse-shell", "cloud-metadata", "outbound-internet"}},
	{threat: "connect to unix sockets on the host (ssh-agent, docker.sock, D-Bus)", layers: []string{"seccomp", "landlock: pathname unix sockets"},
		gap: func(p *policy.Policy) string {
			if p.Allowlist.Network {
				return "network = true lets socket() through, and this kernel's Landlock does not cover pathname sockets before ABI 9"
			}
			return ""
		}, scenarios: []string{"unix-socket-agent", "unix-socket-abstract", "docker-socket"}},
	{threat: "read the server's secrets (its environment, /proc)", layers: []string{"clean environment"},
		gap: func(p *policy.Policy) string {
			for k := range p.Allowlist.Env {
				if secretName.MatchString(k) {
					return "allowlist.env passes " + k
				}
			}
			return ""
		}, scenarios: []string{"proc-self-environ", "proc-parent-environ", "ptrace-parent"}},
	{threat: "gain privileges (root, capabilities, setuid, namespaces, mount, ptrace, bpf, io_uring)", layers: []string{"unprivileged user", "no_new_privs", "seccomp"},
		scenarios: []string{"setuid-root", "capabilities", "ptrace-parent", "unshare-mount", "mknod-device", "kernel-surface"}},
	{threat: "leave processes running after the call", layers: []string{"pid namespace"},
		scenarios: []string{"setsid-survivor", "grandchild-holds-stdout", "server-killed-mid-call", "fork-bomb-shell"}},
	{threat: "exhaust the process table (fork bomb)", layers: []string{"process limit"},
		caveat:    "RLIMIT_NPROC counts every process of the command's uid, so concurrent calls share the budget",
		scenarios: []string{"fork-bomb-python", "fork-bomb-shell"}},
	{threat: "exhaust memory", layers: []string{"rlimits"},
		caveat:    "the address-space limit is per process, not summed over a call's processes (no cgroups)",
		scenarios: []string{"memory-bomb"}},
	{threat: "fill the disk", layers: []string{"rlimits"},
		caveat:    "each file is capped at max_file_size, but nothing caps the number of files in the workspace",
		scenarios: []string{"disk-fill"}},
	{threat: "hog the CPU", layers: []string{"cpu share"}, scenarios: []string{"cpu-spin-past-timeout"}},
	{threat: "flood the client with output, or hang it", server: true,
		scenarios: []string{"output-flood-file", "output-flood-python", "sleep-past-timeout", "cpu-spin-past-timeout", "concurrent-long-calls", "fd-exhaustion", "fake-jsonrpc-on-fds"}},
	{threat: "run a tool with a smuggled environment, directory or shell", server: true,
		scenarios: []string{"extra-tool-arguments", "shell-metacharacters", "argument-injection"}},
}

// Explain maps every threat the scheme faces to the layers in force on this host (as `serve
// --check` measured them) and says plainly which are not enforced.
func Explain(p *policy.Policy, layers []serve.Layer) ([]Threat, error) {
	if p.Scheme != policy.SchemeAllowlist {
		return nil, fmt.Errorf("explain knows the %q scheme's threats only once its executor exists in this build; use an allowlist policy", p.Scheme)
	}
	active := map[string]serve.Layer{}
	for _, l := range layers {
		if l.Active {
			active[l.Name] = l
		}
	}
	var out []Threat
	for _, r := range allowlistThreats {
		t := Threat{Threat: r.threat, Scenarios: r.scenarios}
		for _, name := range r.layers {
			if _, ok := active[name]; ok {
				t.By = append(t.By, name)
			}
		}
		if r.server {
			t.By = append(t.By, "serve (argument checks, output cap, timeout)")
		}
		gap := ""
		if r.gap != nil {
			gap = r.gap(p)
		}
		switch {
		case gap != "":
			t.Status, t.Note = NotEnforced, gap
		case len(t.By) == 0:
			t.Status = NotEnforced
			t.Note = "none of " + strings.Join(r.layers, ", ") + " is in force on this host"
			for _, l := range layers {
				if slices.Contains(r.layers, l.Name) && !l.Active {
					t.Note += "; " + l.Name + ": " + l.Detail
					break
				}
			}
		case r.caveat != "":
			t.Status, t.Note = Partly, r.caveat
		default:
			t.Status = Enforced
		}
		out = append(out, t)
	}
	return out, nil
}

// Layers runs `BIN serve --policy PATH --check --json` and returns the layers it measured: the
// same probe serve makes before it answers a client.
func Layers(ctx context.Context, bin, path string) ([]serve.Layer, error) {
	cmd := exec.CommandContext(ctx, bin, "serve", "--policy", path, "--check", "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("serve --check: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var v struct {
		Layers []serve.Layer `json:"layers"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("serve --check printed something that is not its JSON report: %w", err)
	}
	return v.Layers, nil
}
