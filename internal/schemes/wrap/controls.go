package wrap

import (
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func networkOn(p *policy.Policy, _ *harness.Arena) error {
	wrapsec.Of(p).SetNetwork(policy.Network{Mode: policy.NetAll})
	return nil
}

func readRoot(p *policy.Policy, a *harness.Arena) error {
	wrapsec.Of(p).Read = append(wrapsec.Of(p).Read, a.Root)
	return nil
}

// controls: for every detector a wrap scenario names, the layer opened (a [wrap] key that a
// careless policy could set) or, where no key opens it, the breach staged from outside.
func controls() []harness.Control {
	writeTo := func(dir func(*harness.Arena) string) func(*policy.Policy, *harness.Arena) error {
		return func(p *policy.Policy, a *harness.Arena) error {
			wrapsec.Of(p).Write = append(wrapsec.Of(p).Write, dir(a))
			return nil
		}
	}
	return []harness.Control{
		{Detector: "leak", Scenario: "wrap-read-home-secrets", Kind: "policy",
			Weakness: "read = [the directory holding the client's HOME and the canary]", Mutate: readRoot},
		{Detector: "leak", Scenario: "wrap-dump-env", Kind: "policy",
			Weakness: "env names the client's secret variable: it is passed to the server, which returns it",
			Mutate: func(p *policy.Policy, _ *harness.Arena) error {
				wrapsec.Of(p).Env = append(wrapsec.Of(p).Env, harness.SecretEnv)
				return nil
			}},
		{Detector: "leak", Scenario: "wrap-read-proc", Kind: "staged",
			Weakness: "the other process's /proc/PID/environ read outside the sandbox as the sandbox's uid, as the server could without the PID namespace",
			Inject: func(a *harness.Arena) {
				out, err := a.RunOutside("cat", a.Expand("/proc/{{sibling_pid}}/environ"))
				if err != nil {
					out += "\ncontrol: reading the sibling's environ outside the sandbox failed: " + err.Error()
				}
				a.StageOutput(out)
			}},
		{Detector: "outside", Scenario: "wrap-write-rc", Kind: "policy",
			Weakness: "write = [the client's HOME]", Mutate: writeTo(func(a *harness.Arena) string { return a.Home })},
		{Detector: "outside", Scenario: "wrap-write-outside", Kind: "policy",
			Weakness: "write = [the world-writable directory outside]", Mutate: writeTo(func(a *harness.Arena) string { return a.Outside })},
		{Detector: "persistence", Scenario: "wrap-git-hooks", Kind: "policy",
			Weakness: "write = [the repository the client works in]", Mutate: writeTo(func(a *harness.Arena) string { return a.WS })},
		{Detector: "tcp", Scenario: "wrap-connect-out", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "udp", Scenario: "wrap-connect-out", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "unix", Scenario: "wrap-connect-out", Kind: "policy", Weakness: "network = true (socket() allowed)", Mutate: networkOn},
		{Detector: "egress", Scenario: "wrap-connect-out", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "dns", Scenario: "wrap-dns-exfil", Kind: "policy", Weakness: "network = true", Mutate: networkOn},
		{Detector: "listen", Scenario: "wrap-hidden-listener", Kind: "policy",
			Weakness: "network = true: the server shares the host's network namespace, so its listener is the host's", Mutate: networkOn},
		{Detector: "sibling", Scenario: "wrap-signal-sibling", Kind: "staged",
			Weakness: "the harness ptrace-attaches the sibling from outside the sandbox, as a server of the same uid could without the PID namespace and seccomp",
			Inject: func(a *harness.Arena) {
				if err := a.TraceSibling(); err != nil {
					a.StageOutput("control could not trace the sibling: " + err.Error())
				}
			}},
		{Detector: "survivors", Scenario: "wrap-daemon", Kind: "staged",
			Weakness: "a process left running in the workspace, as a daemon that escaped the server's tree would be",
			Inject:   (*harness.Arena).LeaveProcess},
		{Detector: "responsive", Scenario: "wrap-dump-env", Kind: "staged",
			Weakness: "serve is stopped (SIGSTOP) before the check, as a wedged relay would be",
			Inject:   func(a *harness.Arena) { a.Pause() }},
		{Detector: "processes", Scenario: "wrap-fork-bomb", Kind: "expectation",
			Weakness: "the server held to 4 processes at once while limits.pids is 64: the bomb's measured peak must exceed it",
			Tighten:  func(e *harness.Expect) { e.Pids = 4 }},
		{Detector: "disk", Scenario: "wrap-fill-disk", Kind: "expectation",
			Weakness: "write = [the repository] and files held to 1MiB: the fill lands in the workspace and its size must exceed the bound",
			Mutate:   writeTo(func(a *harness.Arena) string { return a.WS }),
			Tighten:  func(e *harness.Expect) { e.FileSize = 1 << 20 }},
	}
}
