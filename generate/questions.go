package generate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The wizard's questions, as data: each scheme's list, then the limits. A question whose flag was
// given is not asked. Defaults are the answers so far, which start from the existing policy on a
// re-run (AnswersFrom) or from the scheme's defaults (Prefill): the wizard shows what you have.

// Kind is how a question is asked.
type Kind int

// The kinds of question.
const (
	Input       Kind = iota // a line of text; Default and Set use a string
	Confirm                 // yes/no; a bool
	Select                  // one of Options; a string
	MultiSelect             // some of Options; a []string
)

// Question is one thing the wizard asks.
type Question struct {
	Flag     string   // the flag that answers it ("" = always asked)
	Flags    []string // more flags that answer it
	Kind     Kind     //
	Message  func(a *Answers) string
	When     func(a *Answers) bool // nil = always
	Options  func(a *Answers) []string
	Describe func(opt string) string
	Default  func(a *Answers, e Env) any
	Validate func(a *Answers, v string, e Env) error // Input only; a holds the answers so far
	Set      func(a *Answers, v any)
	PageSize int
}

func msg(s string) func(*Answers) string { return func(*Answers) string { return s } }

// SchemeInfo is what the wizard says about a scheme before asking anything else.
type SchemeInfo struct {
	Blurb string // one line, shown beside the choice
	Needs string // what must be in place first; "" = nothing
}

// Schemes describes each scheme for the wizard.
var Schemes = map[string]SchemeInfo{
	policy.SchemeAllowlist: {Blurb: "pinned host binaries, kernel-confined. Isolation: strong for tools, none for code. Flexibility: low. Setup: none. Cost: free, ~7 ms a call"},
	policy.SchemeDocker: {Blurb: "a fresh locked-down container per call. Isolation: strong (shared kernel). Flexibility: any code. Setup: Docker. Cost: free, 50-500 ms a call",
		Needs: "a running Docker engine on this machine, and the image present in it (init offers to pull it)"},
	policy.SchemeE2B: {Blurb: "E2B cloud microVMs. Isolation: strongest, off this machine. Flexibility: any code. Setup: account + API key. Cost: paid per second",
		Needs: "an E2B account, and its API key in an environment variable (E2B_API_KEY by default) both here and where your MCP client starts servers"},
}

var availableTools = sync.OnceValue(func() []string { return Available(CommonTools) })

// commandOptions: the common tools found here, plus any already allowed among them.
func commandOptions(a *Answers) []string { return availableTools() }

func splitList(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

func interpretersIn(allow []string) []string {
	var out []string
	for _, n := range allow {
		if policy.IsInterpreter(filepath.Base(n)) {
			out = append(out, n)
		}
	}
	return out
}

func checkWS(_ *Answers, v string, e Env) error { return CheckWorkspace(ExpandHome(v, e.Home), e.Home) }

// SchemeQuestions are each scheme's own questions, in order.
var SchemeQuestions = map[string][]Question{
	policy.SchemeAllowlist: append([]Question{
		{Flag: "workspace", Kind: Input, Message: msg("Workspace (the commands' working directory, the only place they may write):"),
			Default: func(a *Answers, e Env) any {
				if a.Workspace != "" {
					return a.Workspace
				}
				return filepath.Join(e.Home, "ai-workspace")
			},
			Validate: checkWS, Set: func(a *Answers, v any) { a.Workspace = v.(string) }},
		{Flag: "allow", Kind: MultiSelect, Message: msg("Commands to allow (each is pinned by path and sha256):"), Options: commandOptions,
			Describe: func(v string) string {
				if policy.IsInterpreter(v) {
					return "runs any code: arbitrary code execution"
				}
				return ""
			},
			Default: func(a *Answers, _ Env) any {
				opts := commandOptions(a)
				var d []string
				for _, n := range a.Allow {
					if slices.Contains(opts, n) {
						d = append(d, n)
					}
				}
				return d
			},
			Set: func(a *Answers, v any) { // the chosen ones, then those the list does not offer
				opts := commandOptions(a)
				extra := slices.DeleteFunc(slices.Clone(a.Allow), func(n string) bool { return slices.Contains(opts, n) })
				a.Allow = append(slices.Clone(v.([]string)), extra...)
			}, PageSize: 12},
		{Flag: "allow", Kind: Input, Message: msg("More commands (names or absolute paths, comma-separated; empty for none):"),
			Default: func(a *Answers, _ Env) any {
				opts := commandOptions(a)
				return strings.Join(slices.DeleteFunc(slices.Clone(a.Allow), func(n string) bool { return slices.Contains(opts, n) }), ",")
			},
			Validate: func(_ *Answers, v string, _ Env) error {
				for _, n := range splitList(v) {
					if _, err := Pin(n); err != nil {
						return err
					}
				}
				return nil
			},
			Set: func(a *Answers, v any) {
				opts := commandOptions(a)
				a.Allow = append(slices.DeleteFunc(a.Allow, func(n string) bool { return !slices.Contains(opts, n) }), splitList(v.(string))...)
			}},
		{Flag: "allow", Kind: Confirm,
			When: func(a *Answers) bool { return len(interpretersIn(a.Allow)) > 0 },
			Message: func(a *Answers) string {
				i := strings.Join(interpretersIn(a.Allow), ", ")
				return fmt.Sprintf("%s runs any code it is given: the allowlist would pin nothing. The docker scheme is the safe way to run code. Keep %s anyway?", i, i)
			},
			Default: func(*Answers, Env) any { return false },
			Set: func(a *Answers, v any) {
				if !v.(bool) {
					i := interpretersIn(a.Allow)
					a.Allow = slices.DeleteFunc(a.Allow, func(n string) bool { return slices.Contains(i, n) })
				}
			}},
	}, netQuestions(policy.SchemeAllowlist)...),
	policy.SchemeDocker: append([]Question{
		{Flag: "image", Kind: Input, Message: msg("Image (it must be present in the engine; init offers to pull it):"),
			Default: func(a *Answers, _ Env) any { return a.Image }, Set: func(a *Answers, v any) { a.Image = strings.TrimSpace(v.(string)) },
			Validate: func(_ *Answers, v string, _ Env) error {
				if strings.TrimSpace(v) == "" {
					return fmt.Errorf("name an image, e.g. %s", policy.Default(policy.SchemeDocker).Docker.Image)
				}
				return nil
			}},
		{Flag: "docker-workspace", Kind: Input, Message: msg("Host directory to mount at /workspace (empty for none):"),
			Default: func(a *Answers, _ Env) any { return a.DockerWorkspace },
			Validate: func(_ *Answers, v string, e Env) error {
				if v == "" {
					return nil
				}
				return checkWS(nil, v, e)
			}, Set: func(a *Answers, v any) { a.DockerWorkspace = v.(string) }},
		{Flag: "docker-workspace-writable", Kind: Confirm, Message: msg(WritableWorkspaceQuestion),
			When:    func(a *Answers) bool { return a.DockerWorkspace != "" },
			Default: func(a *Answers, _ Env) any { return a.DockerWorkspaceWritable }, Set: func(a *Answers, v any) { a.DockerWorkspaceWritable = v.(bool) }},
	}, append(netQuestions(policy.SchemeDocker),
		intQuestion("pool", "Containers to keep pre-started (0-8; each serves one call):", 0, 64, func(a *Answers) *int { return &a.Pool }),
		Question{Flag: "runtime", Kind: Input,
			Message: msg(`Container runtime (empty: the engine's default, runc; "crun": the same isolation, starts faster; "runsc": gVisor, a kernel of its own, starts slower; init checks the engine has it):`),
			Default: func(a *Answers, _ Env) any { return a.Runtime }, Set: func(a *Answers, v any) { a.Runtime = strings.TrimSpace(v.(string)) },
			Validate: func(_ *Answers, v string, _ Env) error { return policy.CheckRuntimeName(strings.TrimSpace(v)) }})...),
	policy.SchemeE2B: {
		{Flag: "e2b-template", Kind: Input, Message: msg("E2B template:"),
			Default: func(a *Answers, _ Env) any { return a.E2BTemplate }, Set: func(a *Answers, v any) { a.E2BTemplate = v.(string) }},
		{Flag: "api-key-env", Kind: Input, Message: msg("Environment variable holding your E2B API key (the key itself is never written):"),
			Default: func(a *Answers, _ Env) any { return a.APIKeyEnv }, Set: func(a *Answers, v any) { a.APIKeyEnv = strings.TrimSpace(v.(string)) }},
		{Flag: "reuse", Kind: Select, Message: msg("Sandbox reuse:"), Options: func(*Answers) []string { return []string{"session", "call"} },
			Describe: func(v string) string {
				if v == "call" {
					return "a fresh sandbox for every call: nothing carries over (slower)"
				}
				return "one sandbox per MCP session: files carry over between calls"
			},
			Default: func(a *Answers, _ Env) any { return a.Reuse }, Set: func(a *Answers, v any) { a.Reuse = v.(string) }},
	},
}

func intQuestion(flag, message string, lo, hi int, field func(*Answers) *int) Question {
	return Question{Flag: flag, Kind: Input, Message: msg(message),
		Default: func(a *Answers, _ Env) any { return strconv.Itoa(*field(a)) },
		Validate: func(_ *Answers, v string, _ Env) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < lo || n > hi {
				return fmt.Errorf("give a whole number from %d to %d", lo, hi)
			}
			return nil
		},
		Set: func(a *Answers, v any) { *field(a), _ = strconv.Atoi(strings.TrimSpace(v.(string))) }}
}

// LimitQuestions apply to every scheme.
var LimitQuestions = []Question{
	{Flag: "timeout", Kind: Input, Message: msg("Timeout per call:"), Default: func(a *Answers, _ Env) any { return a.Timeout },
		Set: func(a *Answers, v any) { a.Timeout = v.(string) }},
	{Flag: "max-output", Kind: Input, Message: msg("Output cap per stream:"), Default: func(a *Answers, _ Env) any { return a.MaxOutput },
		Set: func(a *Answers, v any) { a.MaxOutput = v.(string) }},
	{Flag: "memory", Kind: Input, Message: msg("Memory per call:"), Default: func(a *Answers, _ Env) any { return a.Memory },
		Set: func(a *Answers, v any) { a.Memory = v.(string) }},
	intQuestion("pids", "Processes per call:", 1, 32768, func(a *Answers) *int { return &a.Pids }),
}

// TransportQuestions: how the clients reach serve. Asked after the limits, before the clients.
var TransportQuestions = []Question{
	{Flag: "http", Kind: Input,
		Message: msg("Clients start serve themselves over stdio (leave empty), or reach a running `serve --http` at a URL (e.g. http://127.0.0.1:8765/mcp):"),
		Default: func(a *Answers, _ Env) any { return a.HTTPURL },
		Validate: func(_ *Answers, v string, _ Env) error {
			if strings.TrimSpace(v) == "" {
				return nil
			}
			_, err := CheckHTTPURL(v)
			return err
		},
		Set: func(a *Answers, v any) {
			a.HTTPURL = strings.TrimSpace(v.(string))
			if u, err := CheckHTTPURL(a.HTTPURL); err == nil && a.HTTPURL != "" {
				a.HTTPURL = u
			}
		}},
	{Flag: "token-env", Kind: Input, When: func(a *Answers) bool { return a.HTTPURL != "" },
		Message: msg("Environment variable your clients read the bearer token from (only its name is written, never the token; empty for none, loopback only):"),
		Default: func(a *Answers, _ Env) any {
			if a.TokenEnv != "" {
				return a.TokenEnv
			}
			return "MCPSANDBOX_TOKEN"
		},
		Validate: func(_ *Answers, v string, _ Env) error {
			if v = strings.TrimSpace(v); v != "" && !envName.MatchString(v) {
				return fmt.Errorf("%q is not a variable's name: give the NAME of the variable holding the token, never the token", v)
			}
			return nil
		},
		Set: func(a *Answers, v any) { a.TokenEnv = strings.TrimSpace(v.(string)) }},
}

// Prefill fills what neither a flag (given reports which were) nor an existing policy said, from
// the scheme's defaults, so every question shows a default. A base of another scheme is dropped.
func (a *Answers) Prefill(given func(flag string) bool) {
	if a.Base != nil && a.Base.Scheme != a.Scheme {
		a.Base = nil
	}
	d := AnswersFrom(policy.Default(a.Scheme))
	if a.Base != nil {
		d = AnswersFrom(a.Base)
	}
	str := func(flag string, dst *string, v string) {
		if !given(flag) && *dst == "" {
			*dst = v
		}
	}
	if !given("name") && a.Base != nil {
		a.Name = d.Name
	}
	str("timeout", &a.Timeout, d.Timeout)
	str("max-output", &a.MaxOutput, d.MaxOutput)
	str("memory", &a.Memory, d.Memory)
	str("workspace", &a.Workspace, d.Workspace)
	str("image", &a.Image, d.Image)
	str("docker-workspace", &a.DockerWorkspace, d.DockerWorkspace)
	str("runtime", &a.Runtime, d.Runtime)
	str("e2b-template", &a.E2BTemplate, d.E2BTemplate)
	str("api-key-env", &a.APIKeyEnv, d.APIKeyEnv)
	str("reuse", &a.Reuse, d.Reuse)
	if !given("pids") && a.Pids == 0 {
		a.Pids = d.Pids
	}
	if a.Base == nil {
		if !given("allow") && len(a.Allow) == 0 {
			for _, n := range DefaultCommands {
				if slices.Contains(availableTools(), n) {
					a.Allow = append(a.Allow, n)
				}
			}
		}
		return
	}
	if !given("allow") && len(a.Allow) == 0 {
		a.Allow = d.Allow
	}
	if !given("network") && !given("network-hosts") {
		a.Network, a.Hosts = d.Network, d.Hosts
	}
	if a.DockerNetwork == "" {
		a.DockerNetwork = d.DockerNetwork
	}
	if !given("pool") {
		a.Pool = d.Pool
	}
	if !given("docker-workspace-writable") {
		a.DockerWorkspaceWritable = d.DockerWorkspaceWritable
	}
}

// netQuestions ask for the network of the allowlist's commands or the docker containers: none,
// only some hosts (presets, then any others, each checked as the policy checks it), or every
// host. A re-run starts from the policy's list: its presets ticked, the other hosts typed in.
func netQuestions(scheme string) []Question {
	who, all := "commands", "every host: TCP, UDP, DNS and unix sockets on the host (verify flags it, MS107)"
	if scheme == policy.SchemeDocker {
		who = "containers"
	}
	return []Question{
		{Flag: "network", Flags: []string{"network-hosts"}, Kind: Select,
			Message: msg("Give " + who + " network access? (none is strongly recommended; only these hosts when they must fetch packages or call an API)"),
			Options: func(*Answers) []string { return []string{NetChoiceNone, NetChoiceHosts, NetChoiceAll} },
			Describe: func(v string) string {
				switch v {
				case NetChoiceNone:
					return "no network at all"
				case NetChoiceHosts:
					return "the hosts you list next (presets: " + PresetNames() + "), over HTTP/HTTPS through serve's egress proxy; nothing else, no DNS"
				}
				if scheme == policy.SchemeDocker {
					return `joins a docker network ("bridge" unless the policy names one): the host's network and the internet (verify flags it, MS201)`
				}
				return all
			},
			Default: func(a *Answers, _ Env) any { return a.netChoice() },
			Set: func(a *Answers, v any) {
				a.netAsked = v.(string)
				switch v.(string) {
				case NetChoiceNone:
					a.Network, a.Hosts, a.DockerNetwork = false, nil, ""
				case NetChoiceHosts:
					a.Network, a.DockerNetwork = false, ""
				case NetChoiceAll:
					a.Hosts = nil
					if scheme == policy.SchemeDocker {
						if a.DockerNetwork == "" {
							a.DockerNetwork = "bridge"
						}
					} else {
						a.Network = true
					}
				}
			}},
		{Flag: "network-hosts", Kind: MultiSelect, Message: msg("Hosts " + who + " may reach: presets (space to tick; more hosts next):"),
			When:    func(a *Answers) bool { return a.netAsked == NetChoiceHosts },
			Options: func(*Answers) []string { return strings.Split(PresetNames(), ", ") },
			Describe: func(v string) string {
				p, _ := policy.Preset(v)
				return p.Title + ": " + strings.Join(p.Hosts, ", ")
			},
			Default: func(a *Answers, _ Env) any { return presetsIn(a.Hosts) },
			Set: func(a *Answers, v any) { // drop the hosts of presets unticked, add those of presets ticked
				picked := v.([]string)
				var dropped []string
				for _, n := range presetsIn(a.Hosts) {
					if !slices.Contains(picked, n) {
						dropped = append(dropped, presetHosts([]string{n})...)
					}
				}
				hosts := slices.DeleteFunc(slices.Clone(a.Hosts), func(h string) bool { return slices.Contains(dropped, h) })
				for _, h := range presetHosts(picked) {
					if !slices.Contains(hosts, h) {
						hosts = append(hosts, h)
					}
				}
				a.Hosts = hosts
			}},
		{Flag: "network-hosts", Kind: Input,
			Message: msg("Other hosts, comma-separated (pypi.org, api.example.com:443, *.example.com; a bare name allows ports 80 and 443; none = no network):"),
			When:    func(a *Answers) bool { return a.netAsked == NetChoiceHosts },
			Default: func(a *Answers, _ Env) any { return strings.Join(otherHosts(a.Hosts), ", ") },
			Validate: func(a *Answers, v string, _ Env) error {
				if strings.TrimSpace(v) == NetChoiceNone {
					return nil
				}
				typed, err := ExpandHosts(splitList(v))
				if err != nil {
					return err
				}
				if len(typed) == 0 && len(presetHosts(presetsIn(a.Hosts))) == 0 {
					return fmt.Errorf("no host chosen: type at least one (e.g. pypi.org), or %s for no network", NetChoiceNone)
				}
				return nil
			},
			Set: func(a *Answers, v any) {
				if strings.TrimSpace(v.(string)) == NetChoiceNone {
					a.Hosts, a.netAsked = nil, NetChoiceNone
					return
				}
				typed, _ := ExpandHosts(splitList(v.(string))) // validated
				keep := presetHosts(presetsIn(a.Hosts))
				hosts := slices.DeleteFunc(slices.Clone(a.Hosts), func(h string) bool { return !slices.Contains(keep, h) && !slices.Contains(typed, h) })
				for _, h := range typed {
					if !slices.Contains(hosts, h) {
						hosts = append(hosts, h)
					}
				}
				a.Hosts = hosts
			}},
	}
}

// otherHosts are the hosts no whole preset in the list covers: the wizard's free entry.
func otherHosts(hosts []string) []string {
	covered := presetHosts(presetsIn(hosts))
	return slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return slices.Contains(covered, h) })
}

// WritableWorkspaceQuestion says what a writable docker workspace means before it is chosen.
const WritableWorkspaceQuestion = "Mount it writable? Code could then change any file there on this machine: git hooks, " +
	"CLAUDE.md, .npmrc, CI workflows, scripts you run later; verify's attacks report that as breaches (FAIL) " +
	"and verify flags it (MS204). Say no unless code must write results there, and then mount a directory of its own:"
