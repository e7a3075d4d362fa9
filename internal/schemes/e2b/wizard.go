package e2b

import (
	"fmt"
	"strings"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// wizard is the e2b scheme's part of init.
var wizard = &generate.Wizard{
	Blurb: "E2B cloud microVMs. Isolation: strongest, off this machine. Flexibility: any code. Setup: account + API key. Cost: paid per second",
	Needs: "an E2B account, and its API key in an environment variable (E2B_API_KEY by default) both here and where your MCP client starts servers",
	New:   func() generate.SchemeAnswers { return &Answers{} },
}

// Answers are the e2b scheme's own answers in init.
type Answers struct {
	Template  string
	APIKeyEnv string
	Reuse     string
}

// Own is the e2b scheme's answers among a's (a fresh, unkept one when a offers no e2b).
func Own(a *generate.Answers) *Answers {
	if e, ok := a.OwnOf(e2bsec.Name).(*Answers); ok {
		return e
	}
	return &Answers{}
}

// Flags binds --e2b-template, --api-key-env and --reuse.
func (e *Answers) Flags(fl *pflag.FlagSet) {
	fl.StringVar(&e.Template, "e2b-template", "", "e2b: sandbox template (default code-interpreter-v1)")
	fl.StringVar(&e.APIKeyEnv, "api-key-env", "", "e2b: the environment variable holding the API key (default E2B_API_KEY; it must be set here: init checks; the key is never written)")
	fl.StringVar(&e.Reuse, "reuse", "", "e2b: call (new sandbox per call) or session (default)")
	generate.SetFlagRole(fl, "e2b-template", "image", "TEMPLATE")
	generate.SetFlagRole(fl, "reuse", "reuse", "call|session")
}

// Missing: every e2b answer has a default.
func (e *Answers) Missing() []string { return nil }

// From reads the template, the key's variable and the reuse mode back.
func (e *Answers) From(_ *generate.Answers, p *policy.Policy) {
	e.Template, e.APIKeyEnv, e.Reuse = e2bsec.Of(p).Template, e2bsec.Of(p).APIKeyEnv, e2bsec.Of(p).Reuse
}

// Prefill: each answer from ds unless given.
func (e *Answers) Prefill(ds generate.SchemeAnswers, given func(string) bool, _ bool) {
	d := ds.(*Answers)
	generate.PrefillString(given, "e2b-template", &e.Template, d.Template)
	generate.PrefillString(given, "api-key-env", &e.APIKeyEnv, d.APIKeyEnv)
	generate.PrefillString(given, "reuse", &e.Reuse, d.Reuse)
}

// Apply sets the template, the API key's variable and the reuse mode.
func (e *Answers) Apply(_ *generate.Answers, p *policy.Policy, _ policy.Network, _ bool) error {
	if e.Template != "" {
		e2bsec.Of(p).Template = e.Template
	}
	if e.APIKeyEnv != "" {
		e2bsec.Of(p).APIKeyEnv = e.APIKeyEnv
	}
	if e.Reuse != "" {
		e2bsec.Of(p).Reuse = e.Reuse
	}
	switch {
	case e2bsec.Of(p).Reuse == "session" && e2bsec.Of(p).MaxSessions == 0:
		// written out, so the file names the key a session's refusal or note names
		e2bsec.Of(p).MaxSessions = e2bsec.Of(p).SessionCap()
	case e2bsec.Of(p).Reuse == "call":
		e2bsec.Of(p).MaxSessions = 0 // a session key, refused with reuse = "call"
	}
	return nil
}

// Questions: the key's variable, the template and the reuse mode.
func (e *Answers) Questions() []generate.Question { return questions }

var questions = []generate.Question{
	// first, and checked at once: without the key nothing else asked here is of use (trial37 F14:
	// asked second, checked after the third question)
	{Flag: "api-key-env", Kind: generate.Input, Message: generate.Msg("Environment variable holding your E2B API key (the key itself is never written):"),
		Default: func(a *generate.Answers, _ generate.Env) any { return Own(a).APIKeyEnv }, Set: func(a *generate.Answers, v any) { Own(a).APIKeyEnv = strings.TrimSpace(v.(string)) },
		ThenNeeds: true},
	{Flag: "e2b-template", Kind: generate.Input, Message: generate.Msg("E2B template:"),
		Validate: func(_ *generate.Answers, v string, _ generate.Env) error {
			if why := e2bsec.TemplateProblem(strings.TrimSpace(v)); why != "" {
				return fmt.Errorf("%q %s: name a template or its ID, e.g. code-interpreter-v1", strings.TrimSpace(v), why)
			}
			return nil
		},
		Default: func(a *generate.Answers, _ generate.Env) any { return Own(a).Template }, Set: func(a *generate.Answers, v any) { Own(a).Template = strings.TrimSpace(v.(string)) }},
	{Flag: "reuse", Kind: generate.Select, Message: generate.Msg("Sandbox reuse:"), Options: func(*generate.Answers) []string { return []string{"session", "call"} },
		Describe: func(v string) string {
			if v == "call" {
				return "a fresh sandbox for every call: nothing carries over, no file tools (slower)"
			}
			return "one sandbox per MCP session: files carry over between calls; write_file, read_file and list_files reach them"
		},
		Default: func(a *generate.Answers, _ generate.Env) any { return Own(a).Reuse }, Set: func(a *generate.Answers, v any) { Own(a).Reuse = v.(string) }},
}
