package e2b

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LiveEnv, set to 1 (with the key in the policy's api_key_env), points the harness at E2B's
// cloud instead of the local E2B server. Offline is the default: no key, no cost, no network.
const LiveEnv = "MCPSANDBOX_E2B_LIVE"

// offlineKey is the local server's key; it never leaves this machine.
const offlineKey = "e2b_harness0offline0local0server0000000000"

// adapter speaks run_command (and run_code for raw tool steps). Offline (a test build only) it
// starts the local E2B server (internal/harness/e2bfake) once per process and points the serve it
// spawns at it: the policy's api_url, and the arena's serve environment for the sandbox
// address and the key. The harness's own environment is never changed.
type adapter struct{}

// scenariosTOML is how the scheme's tools express the scenarios their neutral steps cannot say
// (its own steps, detectors or skip, by scenario id), checked by harness.Offer.
//
//go:embed scenarios.toml
var scenariosTOML []byte

// offer is what the scheme offers the scenarios' needs: its commands run in a remote microVM: its files, its network (allow_internet, no host list) and its sessions are E2B's, not this host's.
var offer = harness.NewOffer(e2bsec.Name, []string{harness.NeedCommands}, "internal/schemes/e2b/scenarios.toml", scenariosTOML)

// Offer: which scenarios apply to the scheme, and its own steps for some.
func (adapter) Offer() *harness.Offer { return offer }

func live() bool { return os.Getenv(LiveEnv) == "1" }

// Ready says, before any scenario runs, why the harness does not attack the scheme here (ready).
func (adapter) Ready(p *policy.Policy) error {
	keyEnv := e2bsec.Of(p).APIKeyEnv
	if err := ready(live(), os.Getenv(keyEnv) != "", keyEnv, offlineBuilt); err != nil {
		return err
	}
	if live() {
		return nil
	}
	_, _, err := offlineServer()
	return err
}

// ready decides where the harness attacks the scheme: E2B's cloud when the user opted in (live,
// with the key), else the local E2B server, which only a test build has. A release build's user
// is told how to opt in (a *harness.OptInError, which verify reports as the harness not run), and
// never to make a test build: their attacks belong in a real sandbox on their account.
func ready(live, haveKey bool, keyEnv string, offlineBuilt bool) error {
	switch {
	case live && !haveKey:
		e := &harness.OptInError{Why: fmt.Sprintf("%s=1 but $%s is empty", LiveEnv, keyEnv),
			How: "export your E2B key there to run e2b's attacks in a real E2B sandbox on your account (it uses sandbox time)"}
		if offlineBuilt {
			e.Else = "or unset " + LiveEnv + " to run them against the local E2B server"
		}
		return e
	case !live && !offlineBuilt:
		return &harness.OptInError{Why: "e2b's attacks run in a real E2B sandbox on your account",
			How:  "set " + LiveEnv + "=1 to run them (it uses sandbox time)",
			Else: "or, offline against a local E2B server, use a test build (go build -tags testhooks ./cmd/mcpsandbox)"}
	}
	return nil
}

// Notice: a live run attacks the user's own E2B account.
func (adapter) Notice(p *policy.Policy) string {
	if !live() {
		return ""
	}
	return fmt.Sprintf("%s=1: e2b's attacks run in real E2B sandboxes on your account (the key in $%s), and use its sandbox time", LiveEnv, e2bsec.Of(p).APIKeyEnv)
}

func (ad adapter) Prepare(p *policy.Policy, a *harness.Arena) error {
	p.Audit.Path = a.AuditPath()
	if live() {
		return ad.Ready(p)
	}
	url, domain, err := offlineServer()
	if err != nil {
		return err
	}
	e2bsec.Of(p).APIURL = url
	a.ServeEnv = append(a.ServeEnv, "E2B_SANDBOX_URL="+url, "E2B_DOMAIN="+domain, e2bsec.Of(p).APIKeyEnv+"="+offlineKey)
	return nil
}

// visible is which detectors can see what a call did. Offline the sandbox's processes run on
// this host under the local server, but it isolates nothing: only what serve itself promises is
// judged (timeouts, output caps, responsiveness, and, with reuse = call, that nothing the call
// started outlives it). Everything else is E2B's microVM's to prevent, invisible from here.
func visible(p *policy.Policy) []string {
	v := []string{"wall_time", "output", "responsive"}
	if !live() && e2bsec.Of(p).Reuse == "call" {
		v = append(v, "survivors")
	}
	return v
}

// owners indexes the built-in scenarios' e2b steps, so a step can be traced to the detectors
// that judge it. A step no built-in scenario owns is N/A: never contained by default.
var owners = sync.OnceValue(func() map[string][]*harness.Scenario {
	m := map[string][]*harness.Scenario{}
	scs, err := harness.Load()
	if err != nil {
		return m
	}
	for _, s := range scs {
		steps, why := s.StepsFor(offer)
		if why != "" {
			continue
		}
		for _, st := range steps {
			m[stepKey(st)] = append(m[stepKey(st)], s)
		}
	}
	return m
})

func stepKey(st harness.Step) string {
	args, _ := json.Marshal(st.Arguments)
	return strings.Join(append([]string{st.Kind(), st.Python, st.Shell, st.Tool, string(args)}, st.Argv...), "\x00")
}

// applicable says why a step is N/A for this policy, or "".
func applicable(st harness.Step, p *policy.Policy) string {
	scs := owners()[stepKey(st)]
	if len(scs) == 0 {
		return "isolation delegated to E2B: this step belongs to no built-in scenario whose detectors can see an E2B sandbox"
	}
	see := visible(p)
	for _, s := range scs {
		if s.Exclusive {
			return "isolation delegated to E2B: an exclusive, host-loading scenario (a resource bomb) is E2B's microVM's to contain; offline it would run on this host, which the local E2B server does not isolate"
		}
		for _, d := range s.Detectors {
			if !slices.Contains(see, d) {
				why := "the " + d + " detector watches this host, and an E2B sandbox is a remote microVM"
				if d == "survivors" {
					why = "the survivors detector cannot see processes inside an E2B sandbox (with reuse = session they live on in the session's sandbox by design)"
				}
				return "isolation delegated to E2B: " + why
			}
		}
		if len(s.Setup) > 0 {
			return "isolation delegated to E2B: the scenario lays files in a host workspace, which a remote sandbox does not have"
		}
	}
	if st.Kind() == "argv" {
		return "isolation delegated to E2B: argv steps name programs and files of this host's workspace, which a remote sandbox does not have"
	}
	return ""
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (adapter) Params(st harness.Step, a *harness.Arena, p *policy.Policy) (*mcp.CallToolParams, error) {
	if why := applicable(st, p); why != "" {
		return nil, harness.Inapplicable("%s", why)
	}
	command := func(s string) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": s}}
	}
	// The tag rides in argv ($0, sys.argv[1]) so the survivor scan can find the call's tree.
	switch st.Kind() {
	case "argv":
		q := make([]string, len(st.Argv))
		for i, x := range st.Argv {
			q[i] = quote(a.Expand(x))
		}
		return command(st.ShellStart() + strings.Join(q, " ")), nil
	// Python and shell steps prove they started with the harness's start token, printed by a
	// prelude before their first statement (harness.StartToken); a sandbox E2B could not start
	// in time prints nothing, and the harness judges that step ERROR. Argv steps are n/a here.
	case "python":
		return command("exec python3 -c " + quote(st.PythonStart()+a.Expand(st.Python)) + " " + quote(a.Tag)), nil
	case "shell":
		return command("exec sh -c " + quote(st.ShellStart()+a.Expand(st.Shell)) + " " + quote(a.Tag)), nil
	case "tool":
		if st.Tool != "run_code" && st.Tool != "run_command" {
			return nil, harness.Inapplicable("the e2b scheme has no tool %q", st.Tool)
		}
		args := map[string]any{}
		for k, v := range st.Arguments {
			args[k] = harness.ExpandAny(a, v)
		}
		return &mcp.CallToolParams{Name: st.Tool, Arguments: args}, nil
	}
	return nil, fmt.Errorf("empty step")
}

func (adapter) Expect(p *policy.Policy) harness.Expect {
	return harness.Expect{Timeout: p.Limits.Timeout.Duration, Output: int64(p.Limits.MaxOutputBytes),
		Memory: int64(p.Limits.Memory), Grace: harness.Grace}
}
