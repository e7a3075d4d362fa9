package allowlist

import (
	"fmt"
	"strings"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// interpreterIn names every allowlisted interpreter, quoted ("python", "node"), and the verb's
// number: naming only the first hid node behind python (trial37 F9).
func interpreterIn(p *policy.Policy) (names string, plural bool) {
	in := Interpreters(p)
	if mutated("explain-first-interpreter") && len(in) > 1 {
		in = in[:1]
	}
	q := make([]string, len(in))
	for i, n := range in {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", "), len(in) > 1
}

// throughLoader is what an interpreter reaches past the pinned-exec rule (atk40 F1): Landlock must
// let the kernel execute the ELF interpreter for the pinned binary, and run as a program it maps
// any ELF it can read (ld.so /bin/sh, ld.so /usr/bin/perl), with nothing to tell the two apart.
const throughLoader = ", and through the ELF interpreter (ld.so PROGRAM) any program installed on this host"

// interpretersRun is "NAMES is allowlisted and runs any code it is given", in the right number.
func interpretersRun(p *policy.Policy) string {
	n, plural := interpreterIn(p)
	switch {
	case n == "":
		return ""
	case plural:
		return n + " are allowlisted and run any code they are given" + throughLoader
	}
	return n + " is allowlisted and runs any code it is given" + throughLoader
}

var threats = []verify.ThreatRule{
	{Threat: "run a program that is not pinned", Layers: []string{sa.LayerPinnedExec, sa.LayerLandlockFS},
		Gap: func(p *policy.Policy) string {
			return interpretersRun(p)
		}, Scenarios: []string{"planted-binary", "planted-binary-exec", "planted-script-interpreter", "loader-exec", "memfd-exec", "compress-program", "ld-preload"},
		ShownBy: []string{"planted-script-interpreter", "loader-exec"}},
	{Threat: "read host files outside the workspace", Layers: []string{sa.LayerLandlockFS},
		Gap: func(p *policy.Policy) string {
			if len(alsec.Of(p).ReadPaths) > 0 {
				return "read_paths opens " + strings.Join(alsec.Of(p).ReadPaths, ", ")
			}
			if alsec.Of(p).HardLinks == alsec.HardLinksReadOnly {
				return `hardlinks = "read-only" lets commands read hard-linked files`
			}
			return ""
		},
		ClosableGap: func(p *policy.Policy) string {
			if n, _ := interpreterIn(p); n != "" {
				// Landlock judges paths: the argument check refuses hard links it is given,
				// but code inside an interpreter opens what it likes; the call's layer hides them.
				return fmt.Sprintf("%s can open a file the host hard-linked into the workspace, whose other name may be outside it (Landlock judges paths; the transactional workspace, where this host has it, hides such files from the call)", n)
			}
			return ""
		}, ClosedBy: sa.LayerWorkspace, Scenarios: []string{"hardlink-host-made", "hardlink-host-made-python", "hardlink-walked-dir", "read-ssh-key-absolute", "read-canary-dotdot", "read-via-diff", "grep-home-recursive", "read-secrets-python", "symlink-planted", "symlink-two-calls", "hardlink-canary", "argument-injection", "path-prefix-bypass", "symlink-chain-relative", "proc-magic-links", "proc-pid-root-walk", "leaked-dir-fds"}},
	{Threat: "write, truncate or delete outside the workspace", Layers: []string{sa.LayerLandlockFS},
		Scenarios: []string{"write-outside-sort", "write-outside-uniq", "write-outside-python", "rc-files-home", "rc-files-python", "cross-call-leak", "tamper-outside-python"}},
	{Threat: "plant code the host runs later (git hooks and config, editor tasks, .envrc) in the workspace", Server: true,
		Layers: []string{sa.LayerProtectedRO},
		Caveat: "only protected paths (protect, the default list, the repository's core.hooksPath) are guarded: anything else written in the workspace is model-controlled content — review it before you run, build or commit it",
		ClosableGap: func(p *policy.Policy) string {
			if n, _ := interpreterIn(p); n != "" {
				return fmt.Sprintf("%s can create protected files that do not exist yet (a new .git, .npmrc, CLAUDE.md); existing ones are read-only for every call (the transactional workspace, where this host has it, refuses them at the commit)", n)
			}
			return ""
		}, ClosedBy: sa.LayerWorkspace, Scenarios: []string{"git-hooks-argv", "git-hooks-python", "git-config-option-spellings", "git-config-symlink-dotdot", "git-dir-symlinked", "git-hookspath-husky", "git-hookspath-custom", "protected-files-argv"}},
	{Threat: "reach the network (TCP, UDP, DNS, cloud metadata, the internet)", Layers: []string{sa.LayerNetNS, sa.LayerSeccomp},
		Gap: func(p *policy.Policy) string {
			if alsec.Of(p).AllHosts() {
				return "network = true"
			}
			return reachableHosts(p)
		}, Scenarios: []string{"tcp-exfil-loopback", "udp-exfil-loopback", "dns-exfil", "reverse-shell", "cloud-metadata", "outbound-internet", "icmp-exfil", "proxy-allowlist-bypass"}},
	egressThreat,
	{Threat: "connect to unix sockets on the host (ssh-agent, docker.sock, D-Bus)", Layers: []string{sa.LayerSeccomp, sa.LayerLandlockUnix},
		Gap: func(p *policy.Policy) string {
			if alsec.Of(p).AllHosts() {
				return "network = true lets socket() through, and this kernel's Landlock does not cover pathname sockets before ABI 9"
			}
			return ""
		}, Scenarios: []string{"unix-socket-agent", "unix-socket-abstract", "docker-socket"}},
	{Threat: "read the server's secrets (its environment, /proc)", Layers: []string{sa.LayerCleanEnv},
		Gap: func(p *policy.Policy) string {
			for k := range alsec.Of(p).Env {
				if verify.SecretName().MatchString(k) {
					return "allowlist.env passes " + k
				}
			}
			return ""
		}, Scenarios: []string{"proc-self-environ", "proc-parent-environ", "ptrace-parent"}},
	{Threat: "gain privileges (root, capabilities, setuid, namespaces, mount, ptrace, bpf, io_uring)", Layers: []string{sa.LayerUnprivileged, sa.LayerNoNewPrivs, sa.LayerSeccomp},
		Scenarios: []string{"setuid-root", "capabilities", "ptrace-parent", "unshare-mount", "mknod-device", "kernel-surface", "sudo-setuid-helpers", "core-pattern-hijack", "cgroup-release-agent", "host-disk-mount", "open-by-handle"}},
	{Threat: "signal processes outside the sandbox (stop or kill the server, the client)", Layers: []string{sa.LayerPIDNS, sa.LayerLandlockScoped},
		Scenarios: []string{"signal-host-processes"}},
	{Threat: "leave processes running after the call", Layers: []string{sa.LayerPIDNS},
		Scenarios: []string{"setsid-survivor", "grandchild-holds-stdout", "server-killed-mid-call", "fork-bomb-shell"}},
	{Threat: "exhaust the process table (fork bomb)", Layers: []string{sa.LayerProcessLimit},
		Caveat:    "the process budget (limits.pids) is counted per user, so calls running at the same time share it (RLIMIT_NPROC)",
		Scenarios: []string{"fork-bomb-python", "fork-bomb-shell"}},
	{Threat: "exhaust memory", Layers: []string{sa.LayerRlimits},
		Caveat:    "memory is capped for each process, not for the whole call: a call that starts several processes can use a multiple of limits.memory (RLIMIT_AS; summing needs cgroups)",
		Scenarios: []string{"memory-bomb"}},
	{Threat: "fill the disk", Layers: []string{sa.LayerRlimits, sa.LayerWorkspace}, CaveatOf: diskCaveat,
		Scenarios: []string{"disk-fill"}},
	{Threat: "hog the CPU", Layers: []string{sa.LayerCPUShare}, Scenarios: []string{"cpu-spin-past-timeout"}},
	{Threat: "flood the client with output, or hang it", Server: true,
		Scenarios: []string{"output-flood-file", "output-flood-python", "sleep-past-timeout", "cpu-spin-past-timeout", "concurrent-long-calls", "fd-exhaustion", "fake-jsonrpc-on-fds"}},
	{Threat: "run a tool with a smuggled environment, directory or shell", Server: true,
		Scenarios: []string{"extra-tool-arguments", "shell-metacharacters", "argument-injection"}},
}

// diskCaveat says what bounds a call's writes here: each file (RLIMIT_FSIZE) and, where the
// transactional workspace is in force, all a call writes to the workspace (its layer's quota);
// the private /tmp is a tmpfs of its own size, in memory and outside that quota.
func diskCaveat(p *policy.Policy, inForce func(string) bool) string {
	perFile := fmt.Sprintf("each file is capped at allowlist.max_file_size (%s, RLIMIT_FSIZE)", alsec.Of(p).MaxFileSize)
	if !inForce(sa.LayerWorkspace) {
		return perFile + ", but without the transactional workspace (see its row in serve --check) nothing caps how many files a call writes in the workspace"
	}
	return perFile + fmt.Sprintf(" and a call's workspace writes together at limits.workspace_quota (%s: its layer is measured every 250 ms, "+
		"and a call past it is stopped and its writes dropped); left open: /tmp is a private tmpfs of up to limits.memory (%s) per call, "+
		"held in memory rather than on disk and outside the quota, gone when the call ends", p.Limits.WorkspaceQuota, p.Limits.Memory)
}

// reachableHosts is explain's note for a host list: which hosts commands reach, and how.
func reachableHosts(p *policy.Policy) string {
	n := alsec.Of(p).Net()
	if n.Mode != policy.NetHosts {
		return ""
	}
	var hs []string
	for _, r := range n.Hosts() {
		hs = append(hs, r.String())
	}
	return "allowlist.network lists hosts: commands reach " + strings.Join(hs, ", ") +
		" through serve's egress proxy (names resolved and addresses checked by serve; nothing else is reachable)"
}

// egressThreat: with a host list, the proxy is the one way out, and what it lets through is
// what the list names (with no list there is no way out at all: the network namespace).
var egressThreat = verify.ThreatRule{
	Threat: "reach a host the network list does not name (other names, IP literals, DNS tunnelling, other ports, around the proxy)",
	Layers: []string{sa.LayerEgressProxy, sa.LayerNetNS},
	Gap: func(p *policy.Policy) string {
		if alsec.Of(p).AllHosts() {
			return "network = true"
		}
		return egress.WildcardNote(alsec.Of(p).Net().Hosts(), "call")
	},
	Scenarios: []string{"proxy-allowlist-bypass", "dns-exfil", "cloud-metadata", "tcp-exfil-loopback", "udp-exfil-loopback"},
}
