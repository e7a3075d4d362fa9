// Package section is the e2b scheme's part of the policy file, its [e2b] table: the template, the key's variable, the API, reuse and the sandbox's timeout (policy.Section, registered
// with the policy package when linked).
package section

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Name is the cloud-sandbox scheme's name and its section's table.
const Name = "e2b"

func init() {
	policy.RegisterSection(Name, 30, func() policy.Section { return new(E2B) })
}

// Of is p's e2b section.
func Of(p *policy.Policy) *E2B { return p.SectionFor(Name).(*E2B) }

// E2B is the cloud-sandbox proxy scheme.
type E2B struct {
	Template       string          `toml:"template" json:"template"`
	APIKeyEnv      string          `toml:"api_key_env" json:"api_key_env"`
	APIURL         string          `toml:"api_url" json:"api_url"`
	SandboxTimeout policy.Duration `toml:"sandbox_timeout" json:"sandbox_timeout"`
	Reuse          string          `toml:"reuse" json:"reuse"`
	AllowInternet  bool            `toml:"allow_internet" json:"allow_internet"`
	// MaxSessions bounds the session sandboxes alive at once (reuse = "session"); 0 = the
	// default. Left out of the file and the policy's hash when 0, so a policy written before it
	// existed keeps its hash.
	MaxSessions int `toml:"max_sessions,omitzero" json:"max_sessions,omitempty"`
}

// The session sandboxes' bound: E2B caps the sandboxes a team runs at once (Hobby 20, Pro 100
// by default) and answers a create past it with 429; the default stays well under Hobby's, so a
// serve's abandoned sessions cannot take the whole account (attack round atk35, F6).
const (
	DefaultMaxSessions = 8
	MaxMaxSessions     = 1000
)

// SessionCap is e2b.max_sessions, or its default.
func (e *E2B) SessionCap() int {
	if e.MaxSessions > 0 {
		return e.MaxSessions
	}
	return DefaultMaxSessions
}

// URLProblem says why raw may not carry the E2B key or a sandbox's token ("" = it may): an
// http(s) URL with a host, plain http only to a loopback host (127.0.0.0/8, ::1, localhost), where
// the harness's and the tests' stand-ins listen. Plain http elsewhere would send X-API-Key (and
// envd's X-Access-Token, which runs commands in the sandbox) in clear text to whoever is on the
// path (attack round atk35, F7): the host named is trusted, not the way to it.
func URLProblem(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "is not an http(s) URL"
	}
	if u.Scheme == "http" && !loopbackHost(u.Hostname()) && !mutated("e2b-plain-http-remote") {
		return "is plain http to a host that is not loopback: the E2B key (and each sandbox's access token) would cross the network in clear text"
	}
	return ""
}

// loopbackHost: localhost, or an address of 127.0.0.0/8 or ::1.
func loopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// TemplateProblem says why t is no template name or ID ("" = it may be one): E2B names them with
// letters, digits, '-', '_', '.', and a team's "team/name:tag"; a URL typed there (the wizard's
// question after an HTTP one: trial33 F13) is none.
func TemplateProblem(t string) string {
	switch {
	case strings.Contains(t, "://"):
		return "is a URL, not a template"
	case strings.IndexFunc(t, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/", r))
	}) >= 0:
		return "has characters no template name has (letters, digits, - _ . : / only)"
	}
	return ""
}

func (e *E2B) Validate(bool) []policy.Problem {
	var ps []policy.Problem
	add := func(key, msg, fix string, args ...any) {
		ps = append(ps, policy.Problem{Key: key, Msg: fmt.Sprintf(msg, args...), Fix: fix})
	}
	if e.Template == "" {
		add("e2b.template", "missing", `set template = "code-interpreter-v1"`)
	} else if why := TemplateProblem(e.Template); why != "" {
		add("e2b.template", "%q %s", `name a template or its ID, e.g. "code-interpreter-v1" (an address goes in api_url)`, e.Template, why)
	}
	if !policy.ValidEnvName(e.APIKeyEnv) {
		add("e2b.api_key_env", "%q is not an environment variable name", `name the variable holding the key, e.g. "E2B_API_KEY"; never the key itself`, e.APIKeyEnv)
	}
	if e.APIURL != "" {
		if why := URLProblem(e.APIURL); why != "" {
			add("e2b.api_url", "%q %s", `use https:// (plain http only to a loopback host: 127.0.0.1, ::1, localhost), or "" for https://api.e2b.app`, e.APIURL, why)
		}
	}
	if e.SandboxTimeout.Duration <= 0 || e.SandboxTimeout.Duration > 24*time.Hour {
		add("e2b.sandbox_timeout", "%s is outside 1s..24h", `use e.g. "5m"`, e.SandboxTimeout)
	}
	if e.Reuse != "call" && e.Reuse != "session" {
		add("e2b.reuse", "%q is not a reuse mode", `use "call" or "session"`, e.Reuse)
	}
	if e.MaxSessions < 0 || e.MaxSessions > MaxMaxSessions {
		add("e2b.max_sessions", "%d is outside 1..%d", fmt.Sprintf("use e.g. %d, below your E2B plan's concurrent-sandbox limit (Hobby 20, Pro 100); 0 = the default, %d", DefaultMaxSessions, DefaultMaxSessions), e.MaxSessions, MaxMaxSessions)
	}
	if e.Reuse == "call" && e.MaxSessions != 0 {
		add("e2b.reuse", "e2b.max_sessions applies only to reuse = \"session\"", `set reuse = "session", or remove max_sessions`)
	}
	return ps
}

// Network: the e2b section has no `network` key (allow_internet is the sandbox's own switch).
func (e *E2B) Network() (policy.Network, bool) { return policy.Network{}, false }

// SetNetwork: the e2b section has no `network` key.
func (e *E2B) SetNetwork(policy.Network) bool { return false }

func (e *E2B) Defaults() {
	*e = E2B{
		Template:       "code-interpreter-v1",
		APIKeyEnv:      "E2B_API_KEY",
		SandboxTimeout: policy.Duration{Duration: 5 * time.Minute},
		Reuse:          "session",
	}
}

func (e *E2B) BeforeDecode()                    {}
func (e *E2B) AfterDecode(func(...string) bool) {}
func (e *E2B) Payload() any                     { return *e }
func (e *E2B) Copy() policy.Section             { c := *e; return &c }

// Summary: the template and key, reuse, timeout and internet.
func (e *E2B) Summary() []string {
	return []string{fmt.Sprintf("template %s, API key from $%s (never written)", e.Template, e.APIKeyEnv),
		fmt.Sprintf("reuse %s, sandbox timeout %s, internet %s", e.Reuse, e.SandboxTimeout.String(), policy.OnOff(e.AllowInternet))}
}

// KeyElsewhere says where this policy, not the user, chooses what secret serve sends or where
// ("" when the key is an E2B variable bound for E2B's API): an api_key_env not named for E2B
// (a policy naming $AWS_SECRET_ACCESS_KEY has serve send that as its key) or an api_url off
// E2B's hosts (the key goes to that address). verify asks the API only with the user's consent
// then (attack round atk37b, F3), and reports it (MS305).
func (e *E2B) KeyElsewhere() string {
	var why []string
	if k := e.APIKeyEnv; k != "" && !strings.Contains(strings.ToUpper(k), "E2B") {
		why = append(why, fmt.Sprintf("api_key_env names $%s, a variable not named for E2B", k))
	}
	if e.APIURL != "" && !e2bHost(e.APIURL) {
		why = append(why, fmt.Sprintf("api_url %q is not E2B's API (https://api.e2b.app)", e.APIURL))
	}
	return strings.Join(why, "; ")
}

// e2bHost: the URL's host is E2B's API itself (api.e2b.app, api.e2b.dev: what E2B's SDKs build
// from the domain), never another host of its domains, which E2B lends to every sandbox's ports
// (8080-<sandbox>.e2b.app: anyone's server; attack round atk38b, F3).
func e2bHost(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" {
		return false
	}
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if mutated("e2b-api-host-any-subdomain") {
		return h == "e2b.app" || strings.HasSuffix(h, ".e2b.app") || h == "e2b.dev" || strings.HasSuffix(h, ".e2b.dev")
	}
	return (h == "api.e2b.app" || h == "api.e2b.dev") && (u.Port() == "" || u.Port() == "443")
}
