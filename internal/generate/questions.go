package generate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The wizard's questions, as data: each scheme's list (its Wizard's), then the limits. A question whose flag was
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
	// ThenNeeds: the wizard checks what the scheme needs right after this answer (the check
	// reads it: e2b's key variable), not after the scheme's last question.
	ThenNeeds bool
}

func msg(s string) func(*Answers) string { return func(*Answers) string { return s } }

// Msg is a question's fixed message.
func Msg(s string) func(*Answers) string { return msg(s) }

// AvailableTools are the common tools found on the fixed PATH (looked up once).
var AvailableTools = sync.OnceValue(func() []string { return Available(CommonTools) })

// SplitList splits a comma-separated answer into its trimmed, non-empty words.
func SplitList(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// IntQuestion asks for a whole number from lo to hi, kept in *field(a).
func IntQuestion(flag string, message string, lo, hi int, field func(*Answers) *int) Question {
	return intQuestion(flag, message, lo, hi, field)
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
		Validate: limitValid("timeout"), Set: func(a *Answers, v any) { a.Timeout = strings.TrimSpace(v.(string)) }},
	{Flag: "max-output", Kind: Input, Message: msg("Output cap per stream:"), Default: func(a *Answers, _ Env) any { return a.MaxOutput },
		Validate: limitValid("max-output"), Set: func(a *Answers, v any) { a.MaxOutput = strings.TrimSpace(v.(string)) }},
	{Flag: "memory", Kind: Input, Message: msg("Memory per call:"), Default: func(a *Answers, _ Env) any { return a.Memory },
		Validate: limitValid("memory"), Set: func(a *Answers, v any) { a.Memory = strings.TrimSpace(v.(string)) }},
	intQuestion("pids", "Processes per call:", 1, 32768, func(a *Answers) *int { return &a.Pids }),
}

// limitValid judges a limit's answer at its question; empty keeps the scheme's default.
func limitValid(flag string) func(*Answers, string, Env) error {
	return func(a *Answers, v string, _ Env) error {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		l := policy.Default(a.Scheme).Limits
		return SetLimit(&l, flag, v)
	}
}

// TransportQuestions: how the clients reach serve. Asked after the limits, before the clients.
var TransportQuestions = []Question{
	{Flag: "http", Kind: Input,
		Message: msg("Clients start serve themselves over stdio (leave empty), or reach the `serve --http` you start with this policy, at a URL (e.g. http://127.0.0.1:8765/mcp):"),
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
			if v = strings.TrimSpace(v); v != "" && !envName().MatchString(v) {
				return fmt.Errorf("%q is not a variable's name: give the NAME of the variable holding the token, never the token", v)
			}
			return nil
		},
		Set: func(a *Answers, v any) { a.TokenEnv = strings.TrimSpace(v.(string)) }},
}

// Prefill fills what neither a flag (given reports which were) nor an existing policy said, from
// the scheme's defaults, so every question shows a default. A base of another scheme gives only
// its name and the limits it set (the rest is its scheme's); it stays the base of its own scheme
// should the wizard come back to it.
// The scheme's own answers fill theirs (SchemeAnswers.Prefill).
func (a *Answers) Prefill(given func(flag string) bool) {
	if a.Base != nil {
		a.started = a.Base
	}
	var other *policy.Policy
	if a.Base = a.started; a.Base != nil && a.Base.Scheme != a.Scheme {
		other, a.Base = a.Base, nil
		if mutated("wizard-detour-forgets-base") {
			a.started = nil
		}
		// else kept: "Choose another scheme" and back to the policy's own starts from the policy
		// again, its answers the defaults and the file a re-run's, not a foreign one (trial35 F14)
	}
	src := policy.Default(a.Scheme)
	if a.Base != nil {
		src = a.Base
	}
	d := AnswersFrom(src, a.Wizards)
	if other != nil && !mutated("wizard-scheme-change-drops-limits") {
		// [limits] and the name apply to every scheme: a re-run that changes the scheme keeps
		// those the user set (the ones not at their old scheme's defaults) (trial32 F18)
		o, od := AnswersFrom(other, a.Wizards), AnswersFrom(policy.Default(other.Scheme), a.Wizards)
		for _, l := range []struct{ dst, v, def *string }{{&d.Timeout, &o.Timeout, &od.Timeout}, {&d.MaxOutput, &o.MaxOutput, &od.MaxOutput}, {&d.Memory, &o.Memory, &od.Memory}} {
			if *l.v != *l.def {
				*l.dst = *l.v
			}
		}
		if o.Pids != od.Pids {
			d.Pids = o.Pids
		}
		if !given("name") && a.Name == "" {
			a.Name = o.Name
		}
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
	if !given("pids") && a.Pids == 0 {
		a.Pids = d.Pids
	}
	if own := a.Own(); own != nil {
		own.Prefill(d.Own(), given, a.Base != nil)
	}
	if a.Base != nil && !given("network") && !given("network-hosts") {
		a.Network, a.Hosts = d.Network, d.Hosts
	}
}

// PrefillString sets *dst to v unless its flag was given or it holds a value already: what a
// scheme's Prefill does for each of its text answers.
func PrefillString(given func(flag string) bool, flag string, dst *string, v string) {
	if !given(flag) && *dst == "" {
		*dst = v
	}
}

// netQuestions ask// NetQuestions ask for the network of a scheme's sandboxes (who: "commands", "containers"):
// none, only some hosts (presets, then any others, each checked as the policy checks it), or
// every host (all says what that means for the scheme; its NetAnswers record it). A re-run
// starts from the policy's list: its presets ticked, the other hosts typed in.
func NetQuestions(who, all string) []Question {
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
				return all
			},
			Default: func(a *Answers, _ Env) any { return a.netChoice() },
			Set: func(a *Answers, v any) {
				a.netAsked = v.(string)
				switch v.(string) {
				case NetChoiceNone:
					a.Network, a.Hosts = false, nil
					a.setAllHosts(false)
				case NetChoiceHosts:
					a.Network = false
					a.setAllHosts(false)
				case NetChoiceAll:
					a.Hosts = nil
					a.setAllHosts(true)
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
				typed, err := ExpandHosts(SplitList(v))
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
				typed, _ := ExpandHosts(SplitList(v.(string))) // validated
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

// setAllHosts records the choice of every host, or of less, in the scheme's answers
// (NetAnswers), else in Network.
func (a *Answers) setAllHosts(all bool) {
	if n, ok := a.Own().(NetAnswers); ok {
		n.SetAllHosts(a, all)
		return
	}
	a.Network = all
}

// otherHosts are the hosts no whole preset in the list covers: the wizard's free entry.
func otherHosts(hosts []string) []string {
	covered := presetHosts(presetsIn(hosts))
	return slices.DeleteFunc(slices.Clone(hosts), func(h string) bool { return slices.Contains(covered, h) })
}
