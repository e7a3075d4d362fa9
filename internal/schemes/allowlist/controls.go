package allowlist

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func networkOn(p *policy.Policy, _ *harness.Arena) error {
	alsec.Of(p).SetNet(policy.Network{Mode: policy.NetAll})
	return nil
}

// controls lists the negative controls, one or more per detector.
func controls() []harness.Control {
	return append([]harness.Control{
		{Detector: "leak", Scenario: "read-ssh-key-absolute", Kind: "policy",
			Weakness: "read_paths holds the secrets' directory and path arguments may leave the workspace",
			Mutate: func(p *policy.Policy, a *harness.Arena) error {
				alsec.Of(p).ReadPaths = append(alsec.Of(p).ReadPaths, a.Root)
				for i := range alsec.Of(p).Commands {
					alsec.Of(p).Commands[i].AllowOutsidePaths = true
				}
				return nil
			}},
		{Detector: "leak", Scenario: "proc-parent-environ", Kind: "policy",
			Weakness: "read_paths opens /proc and allowlist.env puts the server's API key in the command's environment: it comes back through /proc/PID/environ (the scenario never prints its own environment)",
			Mutate: func(p *policy.Policy, a *harness.Arena) error {
				alsec.Of(p).Env["API_KEY"] = a.Secret
				alsec.Of(p).ReadPaths = append(alsec.Of(p).ReadPaths, "/proc")
				return nil
			}},
		{Detector: "outside", Scenario: "write-outside-python", Kind: "policy",
			Weakness: "the workspace is the parent of the secrets (workspace set too wide; serve's HOME is elsewhere, or serve refuses a workspace that contains its home)",
			Mutate:   wideWorkspace},
		{Detector: "tcp", Scenario: "tcp-exfil-loopback", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "udp", Scenario: "udp-exfil-loopback", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "dns", Scenario: "dns-exfil", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "unix", Scenario: "unix-socket-agent", Kind: "policy", Weakness: "network = true (socket() allowed)", Mutate: networkOn},
		{Detector: "egress", Scenario: "outbound-internet", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "listen", Scenario: "listen-loopback-port", Kind: "policy", Weakness: "network = true: the command shares the host's network namespace, so its listener is the host's", Mutate: networkOn},
		{Detector: "netns", Scenario: "netns-sockets", Kind: "policy", Weakness: "network = true: the call shares the host's network namespace and holds a connection to the harness's loopback listener", Mutate: networkOn},
		{Detector: "survivors", Scenario: "read-canary-dotdot", Kind: "staged",
			Weakness: "a process left running in the workspace, as an escaped child would be",
			Inject:   (*harness.Arena).LeaveProcess},
		{Detector: "responsive", Scenario: "read-canary-dotdot", Kind: "staged",
			Weakness: "the server is stopped (SIGSTOP) before the check, as a wedged server would be",
			Inject:   func(a *harness.Arena) { a.Pause() }},
		{Detector: "wall_time", Scenario: "sleep-past-timeout", Kind: "expectation",
			Weakness: "calls held to 0.5s while the policy lets them run 3s (the harness still waits the policy's 3s+3s, so the overrun is measured)",
			Tighten:  func(e *harness.Expect) { e.Timeout, e.Grace = 500*time.Millisecond, 0 }},
		{Detector: "output", Scenario: "output-flood-file", Kind: "expectation",
			Weakness: "streams held to 1KiB while max_output_bytes is 64KiB",
			Tighten:  func(e *harness.Expect) { e.Output = 1 << 10 }},
		{Detector: "memory", Scenario: "memory-bomb", Kind: "expectation",
			Weakness: "memory held to 32MiB while limits.memory is 1GiB",
			Mutate:   func(p *policy.Policy, _ *harness.Arena) error { p.Limits.Memory = 1 << 30; return nil },
			Tighten:  func(e *harness.Expect) { e.Memory = 32 << 20 }},
		{Detector: "disk", Scenario: "disk-fill", Kind: "expectation",
			Weakness: "files held to 1MiB while max_file_size is 64MiB",
			Tighten:  func(e *harness.Expect) { e.FileSize = 1 << 20 }},
		// serve refuses to run commands as root, so no policy can weaken this one.
		{Detector: "privilege", Scenario: "setuid-root", Kind: "staged", NeedRoot: true,
			Weakness: "a root-owned file appears in the workspace, as a command that became root would leave",
			Inject: func(a *harness.Arena) {
				if os.WriteFile(filepath.Join(a.WS, "made-by-root"), []byte("x"), 0o644) == nil {
					os.Chown(filepath.Join(a.WS, "made-by-root"), 0, 0)
				}
			}},
		{Detector: "processes", Scenario: "fork-bomb-python", Kind: "expectation",
			Weakness: "the call held to 4 processes at once while limits.pids is 64: the bomb's measured peak must exceed it",
			Tighten:  func(e *harness.Expect) { e.Pids = 4 }},
		{Detector: "sibling", Scenario: "ptrace-parent", Kind: "staged",
			Weakness: "the harness ptrace-attaches the sibling from outside the sandbox, as a command of the same uid could without the PID namespace and seccomp",
			Inject: func(a *harness.Arena) {
				if err := a.TraceSibling(); err != nil {
					a.StageOutput("control could not trace the sibling: " + err.Error())
				}
			}},
		{Detector: "syscalls", Scenario: "kernel-surface", Kind: "staged",
			Weakness: "the scenario's own probe run outside the sandbox (as the sandbox's uid, no seccomp), where the syscalls reach the kernel",
			Inject:   stageOutside("kernel-surface", "python3", "python3.13", "python3.12", "python3.11")},
		{Detector: "leak", Scenario: "hardlink-host-made", Kind: "policy",
			Weakness: `hardlinks = "read-only": path arguments naming a host-made hard link are allowed, so cat and sort read the canary outside the workspace through it`,
			Mutate: func(p *policy.Policy, _ *harness.Arena) error {
				alsec.Of(p).HardLinks = alsec.HardLinksReadOnly
				return nil
			}},
		{Detector: "outside", Scenario: "hardlink-host-made", Kind: "staged",
			Weakness: "the scenario's overwrite (sort -o LINK payload.txt) run outside the sandbox as the sandbox's uid: the canary's content changes on the host through the link",
			Inject:   runOutside("sort", "-o", "vendor/store/canary.txt", "payload.txt")},
		{Detector: "persistence", Scenario: "protected-files-argv", Kind: "policy",
			Weakness: `protect = ["!CLAUDE.md", "!AGENTS.md", "!.npmrc", "!.envrc", "!.github/workflows", "!.vscode", "!conftest.py"]: the operator trimmed the default list, so sort -o writes them`,
			Mutate: func(p *policy.Policy, _ *harness.Arena) error {
				alsec.Of(p).Protect = append(alsec.Of(p).Protect, "!CLAUDE.md", "!AGENTS.md", "!.npmrc", "!.envrc", "!.github/workflows", "!.vscode", "!conftest.py")
				return nil
			}},
		{Detector: "persistence", Scenario: "git-hookspath-custom", Kind: "staged",
			Weakness: "the scenario's hook overwrite (sort -o ci/git-hooks/pre-commit payload.txt) run outside the sandbox as the sandbox's uid: the directory core.hooksPath names changes",
			Inject:   runOutside("sort", "-o", "ci/git-hooks/pre-commit", "payload.txt")},
		{Detector: "persistence", Scenario: "git-hookspath-husky", Kind: "staged",
			Weakness: "the scenario's hook overwrite (sort -o .husky/pre-commit payload.txt) run outside the sandbox as the sandbox's uid",
			Inject:   runOutside("sort", "-o", ".husky/pre-commit", "payload.txt")},
		{Detector: "marker", Scenario: "planted-script-interpreter", Kind: "policy",
			Weakness: "an interpreter (python3) is allowlisted"},
		{Detector: "persistence", Scenario: "git-hooks-python", Kind: "policy",
			Weakness: `an interpreter (python3) is allowlisted and protect = ["!.git"]: the operator dropped .git from the list, so the commit applies the hook the interpreter plants`,
			Mutate: func(p *policy.Policy, _ *harness.Arena) error {
				alsec.Of(p).Protect = append(alsec.Of(p).Protect, "!.git")
				return nil
			}},
	}, slices.Concat(homeControls(), execControls(), harness.EgressControls("allowlist.network", "network = true", networkOn))...)
}

// execControls are the controls of the pinned-exec rule's scenarios (atk40 F1).
func execControls() []harness.Control {
	return []harness.Control{
		// the ELF interpreter run as a program maps any readable ELF; Landlock must let the
		// kernel execute it for the pinned binary, so nothing here closes it (README)
		{Detector: "marker", Scenario: "loader-exec", Kind: "policy",
			Weakness: "an interpreter (python3) is allowlisted: it runs ld.so PROGRAM, which Landlock lets it execute"},
		{Detector: "marker", Scenario: "memfd-exec", Kind: "staged",
			Weakness: "the scenario's memfd exec run outside the sandbox (the host's python3 as the sandbox's uid, no seccomp): a memfd made without MFD_NOEXEC_SEAL runs",
			Inject:   stageOutside("memfd-exec", "python3", "python3.13", "python3.12", "python3.11")},
	}
}

// wideWorkspace makes the arena's root the workspace, around its secrets; serve's HOME moves
// out of it, or serve refuses a workspace that contains its home.
func wideWorkspace(p *policy.Policy, a *harness.Arena) error {
	alsec.Of(p).Workspace = a.Root
	a.HomeElsewhere()
	return nil
}

// runOutside runs argv in the workspace outside the sandbox, as the sandbox's uid: a scenario's
// own attack where no layer stops it. A failure is staged as output, so the control's detail
// says why it did not fire.
// homeControls are the controls of the scenarios about a home's start-up files (a workspace
// that is a home): shell rc files, desktop autostart, cron.
func homeControls() []harness.Control {
	return []harness.Control{
		{Detector: "persistence", Scenario: "rc-files-workspace-argv", Kind: "policy",
			Weakness: `protect = ["!.bashrc", "!.profile", "!.zshrc", "!.bash_profile", "!.bash_logout", "!.zshenv"]: the operator trimmed the shell rc files from the default list, so sort -o and uniq write them`,
			Mutate: func(p *policy.Policy, _ *harness.Arena) error {
				alsec.Of(p).Protect = append(alsec.Of(p).Protect, "!.bashrc", "!.profile", "!.zshrc", "!.bash_profile", "!.bash_logout", "!.zshenv")
				return nil
			}},
		{Detector: "persistence", Scenario: "autostart-entry", Kind: "policy",
			Weakness: `protect = ["!.config/autostart"]: sort -o and uniq write the desktop's autostart entries`,
			Mutate: func(p *policy.Policy, _ *harness.Arena) error {
				alsec.Of(p).Protect = append(alsec.Of(p).Protect, "!.config/autostart")
				return nil
			}},
		{Detector: "outside", Scenario: "cron-python", Kind: "staged", NeedRoot: true,
			Weakness: "a crontab (a comment, no job) appears in /etc/cron.d under a name without the run's tag, as a user's crontab appears in the spool",
			Inject:   stageCron},
	}
}

// stageCron stages a comment-only crontab in /etc/cron.d (removed when the arena closes).
func stageCron(a *harness.Arena) {
	if err := a.StageCronFile("/etc/cron.d"); err != nil {
		a.StageOutput("control: " + err.Error())
	}
}

func runOutside(argv ...string) func(*harness.Arena) {
	return func(a *harness.Arena) {
		if out, err := a.RunOutside(argv...); err != nil {
			a.StageOutput("control: " + strings.Join(argv, " ") + " outside the sandbox failed: " + err.Error() + ": " + out)
		}
	}
}

// stageOutside runs the scenario's python step outside the sandbox with the first interpreter
// found, and hands its output to the detectors as the control's evidence.
func stageOutside(id string, pythons ...string) func(*harness.Arena) {
	return func(a *harness.Arena) {
		all, err := harness.Load()
		if err != nil {
			a.StageOutput("control: " + err.Error())
			return
		}
		c, err := pinFirst(pythons)
		if err != nil {
			a.StageOutput("control: no python on this host: " + err.Error())
			return
		}
		for _, s := range all {
			if s.ID == id && len(s.Steps) > 0 {
				out, err := a.RunOutside(c.Path, "-c", a.Expand(s.Steps[0].Python), a.Tag)
				if err != nil {
					out += "\ncontrol: the probe outside the sandbox failed: " + err.Error()
				}
				a.StageOutput(out)
			}
		}
	}
}

// controlPolicy is the base the controls weaken: the built-in allowlist plus python3 and sh,
// with a 3s timeout. On its own it contains every control's scenario except the three whose
// weakness is the interpreter itself (planted-script-interpreter, git-hooks-python, loader-exec).
func controlPolicy() (*policy.Policy, error) {
	p, err := builtIn(os.TempDir())
	if err != nil {
		return nil, err
	}
	for name, candidates := range map[string][]string{
		// Debian's python3.X-minimal ships no python3 link: take the versioned binary then.
		"python3": {"python3", "python3.13", "python3.12", "python3.11"},
		"sh":      {"sh", "dash", "bash"},
	} {
		c, err := pinFirst(candidates)
		if err != nil {
			return nil, fmt.Errorf("the negative controls need %s on this host: %w", name, err)
		}
		c.Name = name
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	}
	slices.SortFunc(alsec.Of(p).Commands, func(a, b policy.Command) int { return strings.Compare(a.Name, b.Name) })
	p.Name = "harness-controls"
	p.Limits.Timeout = policy.Duration{Duration: 3 * time.Second}
	return p, nil
}

func pinFirst(names []string) (policy.Command, error) {
	var first error
	for _, n := range names {
		c, err := generate.Pin(n)
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return policy.Command{}, first
}
