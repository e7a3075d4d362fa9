package policy

import (
	"fmt"
	"net/url"
	"time"
)

// SchemeE2B is the cloud-sandbox scheme's name and its section's table.
const SchemeE2B = "e2b"

func init() {
	registerSection(SchemeE2B, 30, func(p *Policy) Section { return &p.E2B })
}

// E2B is the cloud-sandbox proxy scheme.
type E2B struct {
	Template       string   `toml:"template" json:"template"`
	APIKeyEnv      string   `toml:"api_key_env" json:"api_key_env"`
	APIURL         string   `toml:"api_url" json:"api_url"`
	SandboxTimeout Duration `toml:"sandbox_timeout" json:"sandbox_timeout"`
	Reuse          string   `toml:"reuse" json:"reuse"`
	AllowInternet  bool     `toml:"allow_internet" json:"allow_internet"`
}

func (e *E2B) validate(bool) []Problem {
	var ps []Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	if e.Template == "" {
		add("e2b.template", "missing", `set template = "code-interpreter-v1"`)
	}
	if !envNameRe.MatchString(e.APIKeyEnv) {
		add("e2b.api_key_env", "%q is not an environment variable name", `name the variable holding the key, e.g. "E2B_API_KEY"; never the key itself`, e.APIKeyEnv)
	}
	if e.APIURL != "" {
		if u, err := url.Parse(e.APIURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			add("e2b.api_url", "%q is not an http(s) URL", `use "" for https://api.e2b.app`, e.APIURL)
		}
	}
	if e.SandboxTimeout.Duration <= 0 || e.SandboxTimeout.Duration > 24*time.Hour {
		add("e2b.sandbox_timeout", "%s is outside 1s..24h", `use e.g. "5m"`, e.SandboxTimeout)
	}
	if e.Reuse != "call" && e.Reuse != "session" {
		add("e2b.reuse", "%q is not a reuse mode", `use "call" or "session"`, e.Reuse)
	}
	return ps
}

// Network: the e2b section has no `network` key (allow_internet is the sandbox's own switch).
func (e *E2B) Network() (Network, bool) { return Network{}, false }

// SetNetwork: the e2b section has no `network` key.
func (e *E2B) SetNetwork(Network) bool { return false }

func (e *E2B) defaults() {
	*e = E2B{
		Template:       "code-interpreter-v1",
		APIKeyEnv:      "E2B_API_KEY",
		SandboxTimeout: Duration{5 * time.Minute},
		Reuse:          "session",
	}
}

func (e *E2B) beforeDecode()                    {}
func (e *E2B) afterDecode(func(...string) bool) {}
func (e *E2B) payload() any                     { return *e }
func (e *E2B) deepCopy()                        {}

// Summary: the template and key, reuse, timeout and internet.
func (e *E2B) Summary() []string {
	return []string{fmt.Sprintf("template %s, API key from $%s (never written)", e.Template, e.APIKeyEnv),
		fmt.Sprintf("reuse %s, sandbox timeout %s, internet %s", e.Reuse, e.SandboxTimeout.String(), onOff(e.AllowInternet))}
}
