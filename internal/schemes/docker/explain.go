package docker

import (
	"fmt"
	"strings"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// workspaceGap: a writable workspace carries what one call writes to the next (stateGap).
func workspaceGap(p *policy.Policy) string {
	if dksec.Of(p).Workspace != "" && dksec.Of(p).WorkspaceWritable {
		return fmt.Sprintf("workspace_writable = true: calls can change %s on the host (through the per-call layer where serve --check shows it: checked, at most limits.workspace_quota a call)", dksec.Of(p).Workspace)
	}
	return ""
}

// workspaceOpening: a writable workspace opens that directory, and only it, to a call's writes
// (the rest of the host stays out of reach: the threat is partly enforced).
func workspaceOpening(p *policy.Policy, inForce func(string) bool) string {
	d := dksec.Of(p)
	if d.Workspace == "" || !d.WorkspaceWritable {
		return ""
	}
	how := "each call's writes committed after checks through its per-call layer, at most limits.workspace_quota a call"
	if !inForce(sd.LayerWorkspace) {
		how = "unchecked: this host gives no per-call layer (see the workspace mount row of serve --check)"
	}
	return fmt.Sprintf("workspace_writable = true: calls can change, truncate or delete files in %s on the host (%s); nothing else of the host is mounted", d.Workspace, how)
}

// plantCaveat: with a writable workspace, the per-call layer refuses the protected names at its
// commit (git hooks and config, .envrc, agent files): anything else a call writes there is
// model-controlled content, as with the allowlist scheme's protect list (trial35 F5: it said
// "enforced"). Read-only or none, nothing can be planted.
func plantCaveat(p *policy.Policy, _ func(string) bool) string {
	if d := dksec.Of(p); d.Workspace == "" || !d.WorkspaceWritable || mutated("docker-explain-plant-enforced") {
		return ""
	}
	return "only protected names (.git/hooks and git config, .envrc, agent and editor files: the per-call layer refuses them at its commit) are guarded: " +
		"anything else written in the workspace is model-controlled content — review it before you run, build or commit it"
}

// networkGap names a docker network the policy opened: the threat is not enforced.
func networkGap(p *policy.Policy) string {
	if n := dksec.Of(p).Net(); n.Mode == policy.NetNamed {
		return fmt.Sprintf("network = %s", n)
	}
	return ""
}

// networkOpening names the hosts reachable through serve's egress proxy: the threat is enforced
// for everything else.
func networkOpening(p *policy.Policy, _ func(string) bool) string {
	n := dksec.Of(p).Net()
	if n.Mode != policy.NetHosts {
		return ""
	}
	var hs []string
	for _, h := range n.Hosts() {
		hs = append(hs, h.String())
	}
	note := fmt.Sprintf("HTTP(S) to the hosts docker.network lists is open: %s (through serve's egress proxy; every other name, IP literal, DNS, metadata and private address is refused)", strings.Join(hs, ", "))
	if w := egress.WildcardNote(n.Hosts(), "container"); w != "" {
		note += "; " + w
	}
	return note
}

// runtimeGap: containers on a runtime that shares the host kernel (docker.runtime unset: the
// engine's default, or runc, crun) are one kernel bug from the host; the note says what this
// engine has to close it (trial35 F5: runsc registered, explain did not say so; MS205 did).
func runtimeGap(p *policy.Policy) string {
	rt := dksec.Of(p).Runtime
	if sd.OwnKernel(rt) != "" {
		return ""
	}
	what := "runtime is unset"
	if rt != "" {
		what = fmt.Sprintf("runtime = %q", rt)
	}
	gap := what + ": containers share the host kernel (seccomp and dropped capabilities narrow its surface; only a VM-grade runtime such as gVisor runsc puts a kernel of its own in between)"
	if mutated("docker-explain-runtime-unsaid") {
		return gap
	}
	if vm := registeredVMRuntime(); vm != "" {
		return gap + fmt.Sprintf("; %s is registered with this engine: set runtime = %q (a call then starts in a VM-grade sandbox, slower to start)", vm, vm)
	}
	return gap + `; install gVisor and set runtime = "runsc"`
}

// diskGap: with docker.read_only = false a call writes the container's own filesystem (/var/tmp
// and whatever else the image leaves writable), which the engine keeps on its disk with no size
// bound until serve removes the container: measured, 458 MB in 20 s of a call at 0.5 CPU.
func diskGap(p *policy.Policy) string {
	if dksec.Of(p).ReadOnly || mutated("atk19b-docker-disk-gap") {
		return ""
	}
	return fmt.Sprintf("read_only = false: a call can write the container's own filesystem (/var/tmp, …) on the engine's disk with no size bound "+
		"(%d MiB a file, any number of files) until its container is removed after the call", sd.FileSizeLimit>>20)
}

// diskCaveat: only a writable workspace puts host disk in a call's reach, capped per file
// (fsize) and, where the per-call layer is in force, per call; read-only or none, the row is
// enforced (trial37 F11: the caveat was given for every policy).
func diskCaveat(p *policy.Policy, inForce func(string) bool) string {
	if d := dksec.Of(p); (d.Workspace == "" || !d.WorkspaceWritable) && !mutated("docker-explain-disk-caveat-always") {
		return ""
	}
	if !inForce(sd.LayerWorkspace) {
		return "workspace_writable = true: the workspace is capped per file (fsize) only (this host gives no per-call layer, see the workspace mount row of serve --check)"
	}
	return "workspace_writable = true: the workspace is capped per file (fsize) and, through the per-call layer, per call (limits.workspace_quota)"
}

// socketGap: a docker network puts abstract sockets in reach; a host list does not (the
// containers keep network none, and the only mounted socket is serve's egress proxy).
func socketGap(p *policy.Policy) string {
	if n := dksec.Of(p).Net(); n.Mode == policy.NetNamed {
		return fmt.Sprintf("network = %s", n)
	}
	return ""
}

var threats = []verify.ThreatRule{
	{Threat: "escape to the host through a kernel bug (the container shares the host's kernel)", Layers: []string{sd.LayerRuntime},
		Gap: runtimeGap, Scenarios: []string{"kernel-surface", "unshare-mount", "mknod-device"}},
	{Threat: "read host files outside the workspace", Layers: []string{sd.LayerEngine},
		Scenarios: []string{"read-ssh-key-absolute", "read-canary-dotdot", "read-via-diff", "grep-home-recursive", "read-secrets-python", "symlink-planted", "symlink-two-calls", "hardlink-canary", "argument-injection"}},
	{Threat: "write, truncate or delete host files", Layers: []string{sd.LayerWorkspace, sd.LayerReadOnlyRoot},
		Opening: workspaceOpening, Scenarios: []string{"write-outside-sort", "write-outside-uniq", "write-outside-python", "rc-files-home", "rc-files-python"}},
	{Threat: "plant code the host runs later (git hooks and config, editor tasks, .envrc) in the workspace", Layers: []string{sd.LayerWorkspace},
		CaveatOf: plantCaveat, Scenarios: []string{"git-hooks-argv", "git-hooks-python", "git-hookspath-custom", "git-hookspath-husky", "protected-files-argv"}},
	{Threat: "carry state from one call to the next", Server: true, By: "a fresh container per call, removed afterwards",
		Gap: stateGap, Scenarios: []string{"cross-call-leak"}},
	{Threat: "reach the network (TCP, UDP, DNS, cloud metadata, the internet)", Layers: []string{sd.LayerNetwork},
		Gap: networkGap, Opening: networkOpening, Scenarios: []string{"tcp-exfil-loopback", "udp-exfil-loopback", "dns-exfil", "reverse-shell", "cloud-metadata", "outbound-internet"}},
	{Threat: "connect to unix sockets on the host (ssh-agent, docker.sock, D-Bus)", Layers: []string{sd.LayerNetwork},
		Caveat: "pathname sockets are out of reach because no host path is mounted besides the workspace; abstract sockets live in the network namespace",
		Gap:    socketGap, Scenarios: []string{"unix-socket-agent", "unix-socket-abstract", "docker-socket"}},
	{Threat: "read the server's secrets (its environment, /proc)", Layers: []string{sd.LayerEnv},
		Scenarios: []string{"proc-self-environ", "proc-parent-environ", "ptrace-parent"}},
	{Threat: "gain privileges (root, capabilities, setuid, namespaces, mount, ptrace, bpf, io_uring)", Layers: []string{sd.LayerUser, sd.LayerCaps, sd.LayerNoNewPrivs, sd.LayerSeccomp},
		Gap: func(p *policy.Policy) string {
			if dksec.RootUser(dksec.Of(p).User) { // "00:00", "root:root", "0:1000" too
				return "user = " + dksec.Of(p).User + ": code runs as root in the container"
			}
			return ""
		}, Scenarios: []string{"setuid-root", "capabilities", "ptrace-parent", "unshare-mount", "mknod-device", "kernel-surface"}},
	{Threat: "leave processes running after the call", Layers: []string{sd.LayerInit},
		Caveat: "serve removes each container after its call; if serve is killed, a watchdog in the container kills its processes and the next serve removes the container",
		Gap: func(p *policy.Policy) string {
			if dksec.Of(p).Sessions() { // trial34 F4: the caveat above is per call
				return fmt.Sprintf(`reuse = "session": a session's processes outlive its calls by design, in its container, until the session ends, docker.session_idle (%s) passes, or another session takes its place (docker.max_sessions); a call that overruns its timeout has the container removed`, policy.Duration{Duration: dksec.Of(p).Idle()})
			}
			return ""
		},
		Scenarios: []string{"setsid-survivor", "grandchild-holds-stdout", "server-killed-mid-call", "fork-bomb-shell"}},
	{Threat: "exhaust the process table (fork bomb)", Layers: []string{sd.LayerPids},
		// atk39 F2: what the kernel accounts per uid is not the container's to bound.
		Caveat: "limits.pids bounds each container (its cgroup), but the kernel's per-uid limits are one pool: every container runs as the same host uid " +
			"(65534, or a writable workspace's owner; no user namespace), so one call can take all of that uid's inotify instances and watches, " +
			"message-queue bytes or pending signals from every other container of every session and serve, and from the host's processes of that uid",
		Scenarios: []string{"fork-bomb-python", "fork-bomb-shell"}},
	{Threat: "exhaust memory", Layers: []string{sd.LayerMemory}, Scenarios: []string{"memory-bomb"}},
	{Threat: "fill the disk", Layers: []string{sd.LayerReadOnlyRoot, sd.LayerTmpfs, sd.LayerUlimits},
		CaveatOf: diskCaveat, Gap: diskGap, Scenarios: []string{"disk-fill"}},
	{Threat: "hog the CPU", Layers: []string{sd.LayerCPU}, Scenarios: []string{"cpu-spin-past-timeout"}},
	{Threat: "flood the client with output, or hang it", Server: true, By: "output capped while it streams; the timeout kills the container",
		Scenarios: []string{"output-flood-file", "output-flood-python", "sleep-past-timeout", "cpu-spin-past-timeout", "concurrent-long-calls", "fd-exhaustion", "fake-jsonrpc-on-fds"}},
	{Threat: "run a tool with a smuggled environment, directory or shell", Server: true, By: "strict tool arguments: unknown fields are refused",
		Scenarios: []string{"shell-metacharacters"}},
}
