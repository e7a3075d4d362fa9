package docker

import (
	"os"
	"os/exec"
	"path/filepath"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// hostNetwork is the network weakness. The control scenarios only ever talk to the harness's
// loopback listeners, so no test traffic leaves the host.
func hostNetwork(p *policy.Policy, _ *harness.Arena) error {
	dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "host"})
	return nil
}

// rootMounted mounts the whole scratch root (canaries, fake HOME, the unix socket) at
// /workspace, as a workspace set too wide would.
func rootMounted(writable bool) func(*policy.Policy, *harness.Arena) error {
	return func(p *policy.Policy, a *harness.Arena) error {
		dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = a.Root, writable
		a.HomeElsewhere() // else serve refuses a workspace that contains its home
		return nil
	}
}

// plant writes files into the workspace from outside the sandbox; a failure is staged as output.
func plant(files map[string]os.FileMode) func(*harness.Arena) {
	return func(a *harness.Arena) {
		for rel, mode := range files {
			p := filepath.Join(a.WS, rel)
			err := os.MkdirAll(filepath.Dir(p), 0o755)
			if err == nil {
				err = os.WriteFile(p, []byte("#!/bin/sh\ntouch /tmp/pwned\n"), mode)
			}
			if err == nil {
				err = os.Chmod(p, mode)
			}
			if err != nil {
				a.StageOutput("control could not plant " + rel + ": " + err.Error())
			}
		}
	}
}

func writable(p *policy.Policy, _ *harness.Arena) error {
	dksec.Of(p).WorkspaceWritable = true
	return nil
}

// stageOutside runs the scenario's docker python step outside any container with the host's
// python3, and hands its output to the detectors as the control's evidence.
func stageOutside(id string) func(*harness.Arena) {
	return func(a *harness.Arena) {
		all, err := harness.Load()
		if err != nil {
			a.StageOutput("control: " + err.Error())
			return
		}
		// The system's interpreter: the control runs it as the container's uid, which cannot
		// enter a user's own install (pyenv shims under /root, say).
		var py string
		for _, c := range []string{"/usr/bin/python3", "/usr/local/bin/python3", "/bin/python3"} {
			if _, err := exec.LookPath(c); err == nil && py == "" {
				py = c
			}
		}
		if py == "" {
			a.StageOutput("control: no python3 in /usr/bin, /usr/local/bin or /bin on this host")
			return
		}
		for _, s := range all {
			if steps, _ := s.StepsFor(offer); s.ID == id && len(steps) > 0 {
				out, err := a.RunOutside(py, "-c", a.Expand(steps[0].Python))
				if err != nil {
					out += "\ncontrol: the probe outside the container failed: " + err.Error()
				}
				a.StageOutput(out)
			}
		}
	}
}

// controls lists the negative controls, one or more per detector. egress has none: its
// scenarios send to addresses off this host, and no test traffic may leave it.
func controls() []harness.Control {
	return append([]harness.Control{
		{Detector: "leak", Scenario: "read-ssh-key-absolute", Kind: "policy",
			Weakness: "the workspace is the parent of the secrets (docker.workspace set too wide)", Mutate: rootMounted(false)},
		{Detector: "outside", Scenario: "write-outside-python", Kind: "policy",
			Weakness: "the parent of the secrets is mounted writable (workspace too wide, workspace_writable)", Mutate: rootMounted(true)},
		{Detector: "tcp", Scenario: "tcp-exfil-loopback", Kind: "policy", Weakness: `network = "host"`, Mutate: hostNetwork},
		{Detector: "udp", Scenario: "udp-exfil-loopback", Kind: "policy", Weakness: `network = "host"`, Mutate: hostNetwork},
		{Detector: "netns", Scenario: "netns-sockets", Kind: "policy",
			Weakness: `network = "host": the container's processes share the host's network namespace; their own socket tables, read from the host through a container pid, hold the connection to the harness's loopback listener`,
			Mutate:   hostNetwork},
		{Detector: "dns", Scenario: "dns-exfil", Kind: "policy", Weakness: `network = "host"`, Mutate: hostNetwork},
		{Detector: "unix", Scenario: "unix-socket-abstract", Kind: "policy", Weakness: `network = "host" (abstract sockets live in the network namespace)`, Mutate: hostNetwork},
		{Detector: "unix", Scenario: "unix-socket-agent", Kind: "policy",
			Weakness: "the directory holding the agent's socket is mounted (workspace set too wide)", Mutate: rootMounted(false)},
		{Detector: "survivors", Scenario: "read-canary-dotdot", Kind: "staged",
			Weakness: "a process left running in the workspace, as an escaped child would be",
			Inject:   (*harness.Arena).LeaveProcess},
		{Detector: "responsive", Scenario: "read-canary-dotdot", Kind: "staged",
			Weakness: "the server is stopped (SIGSTOP) before the check, as a wedged server would be",
			Inject:   func(a *harness.Arena) { a.Pause() }},
		{Detector: "survivors", Scenario: "disguised-survivor", Kind: "expectation",
			Weakness: "the container's cgroup held to empty the instant the call returns, while serve removes the container after answering: the disguised sleep, found by cgroup alone, is still listed",
			Tighten:  func(e *harness.Expect) { e.CgroupWait = time.Nanosecond }},
		{Detector: "wall_time", Scenario: "sleep-past-timeout", Kind: "expectation",
			Weakness: "calls held to 0.5s while the policy lets them run 6s",
			Tighten:  func(e *harness.Expect) { e.Timeout, e.Grace = 500*time.Millisecond, 0 }},
		{Detector: "output", Scenario: "output-flood-python", Kind: "expectation",
			Weakness: "streams held to 1KiB while max_output_bytes is 64KiB",
			Tighten:  func(e *harness.Expect) { e.Output = 1 << 10 }},
		{Detector: "memory", Scenario: "memory-bomb", Kind: "expectation",
			Weakness: "memory held to 32MiB while limits.memory is 1GiB",
			Mutate: func(p *policy.Policy, _ *harness.Arena) error {
				p.Limits.Memory, p.Limits.CPUs = 1<<30, 1 // a full CPU: the bomb grows well past the bound within the timeout
				return nil
			},
			Tighten: func(e *harness.Expect) { e.Memory = 32 << 20 }},
		{Detector: "disk", Scenario: "disk-fill", Kind: "expectation",
			Weakness: "files held to 1MiB while the container's fsize limit is 64MiB, in a writable workspace",
			Mutate:   writable,
			Tighten:  func(e *harness.Expect) { e.FileSize = 1 << 20 }},
		{Detector: "privilege", Scenario: "setuid-root", Kind: "staged", NeedRoot: true,
			Weakness: "a root-owned file appears in the workspace, as a command that became root would leave",
			Inject: func(a *harness.Arena) {
				if os.WriteFile(filepath.Join(a.WS, "made-by-root"), []byte("x"), 0o644) == nil {
					os.Chown(filepath.Join(a.WS, "made-by-root"), 0, 0)
				}
			}},
		// No policy lets these through any more: a writable workspace's changes reach the host only
		// through the per-call layer's checked commit. So the breach is staged: the files a commit
		// that let the call's writes through would leave.
		{Detector: "persistence", Scenario: "git-hooks-python", Kind: "staged",
			Weakness: "an executable .git/hooks/pre-commit appears in the workspace, as an unchecked commit of the call's layer would leave",
			Inject:   plant(map[string]os.FileMode{".git/hooks/pre-commit": 0o755})},
		{Detector: "persistence", Scenario: "git-hookspath-custom", Kind: "staged",
			Weakness: "ci/git-hooks/pre-push (the directory core.hooksPath names) appears in the workspace, as an unchecked commit would leave",
			Inject:   plant(map[string]os.FileMode{"ci/git-hooks/pre-push": 0o755})},
		{Detector: "persistence", Scenario: "protected-files-argv", Kind: "staged",
			Weakness: "CLAUDE.md and .envrc appear in the workspace, as an unchecked commit would leave",
			Inject:   plant(map[string]os.FileMode{"CLAUDE.md": 0o644, ".envrc": 0o644})},
		{Detector: "persistence", Scenario: "rc-files-workspace-python", Kind: "staged",
			Weakness: ".zshrc and .bash_logout appear in the workspace (a home), as an unchecked commit would leave",
			Inject:   plant(map[string]os.FileMode{".zshrc": 0o644, ".bash_logout": 0o644})},
		{Detector: "persistence", Scenario: "systemd-user-unit", Kind: "staged",
			Weakness: "a service lands in .config/systemd/user (a home's), as an unchecked commit would leave",
			Inject:   plant(map[string]os.FileMode{".config/systemd/user/mcpsb-sync.service": 0o644})},
		{Detector: "persistence", Scenario: "autostart-entry", Kind: "staged",
			Weakness: "an entry lands in .config/autostart (a home's), as an unchecked commit would leave",
			Inject:   plant(map[string]os.FileMode{".config/autostart/updater.desktop": 0o644})},
		{Detector: "outside", Scenario: "cron-python", Kind: "staged", NeedRoot: true,
			Weakness: "a crontab (a comment, no job) appears in /etc/cron.d under a name without the run's tag, as a user's crontab appears in the spool",
			Inject: func(a *harness.Arena) {
				if err := a.StageCronFile("/etc/cron.d"); err != nil {
					a.StageOutput("control: " + err.Error())
				}
			}},
		{Detector: "sibling", Scenario: "ptrace-parent", Kind: "staged",
			Weakness: "the harness ptrace-attaches the sibling from outside the container, as a process of the same uid in the host's PID namespace could",
			Inject: func(a *harness.Arena) {
				if err := a.TraceSibling(); err != nil {
					a.StageOutput("control could not trace the sibling: " + err.Error())
				}
			}},
		{Detector: "syscalls", Scenario: "kernel-surface", Kind: "staged",
			Weakness: "the scenario's memfd probe run outside the container (the host's python3, as the container's uid, no seccomp profile), where the syscalls reach the kernel",
			Inject:   stageOutside("kernel-surface")},
	}, append(sessionControls(), harness.EgressControls("docker.network", `network = "host"`, hostNetwork)...)...)
}
