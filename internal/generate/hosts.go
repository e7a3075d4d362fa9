package generate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// PresetNames lists the network presets' names, for messages.
func PresetNames() string { return strings.Join(presetNames(), ", ") }

func presetNames() []string {
	names := make([]string, len(policy.NetworkPresets))
	for i, p := range policy.NetworkPresets {
		names[i] = p.Name
	}
	return names
}

// CheckHost checks one host word of --network-hosts or the wizard with the policy's own rules
// and returns its canonical form. init is stricter than a policy file in one way: a name of
// one label ("pypi", "pip") is refused, since it is far more often a mistyped preset or a
// half-written name than a host the egress proxy could reach (single-label names are local).
func CheckHost(word string) (string, error) {
	r, err := policy.ParseHostRule(word)
	if err != nil {
		return "", err
	}
	if dom := strings.TrimPrefix(r.Pattern, "*."); !r.IP.IsValid() && !strings.Contains(dom, ".") {
		if dom == "localhost" {
			return "", fmt.Errorf("%q is this machine's loopback, which calls never reach (nor the host's own addresses): name a host on the network, or leave it out", word)
		}
		msg := fmt.Sprintf("%q is neither a preset (%s) nor a full host name: write the whole name, e.g. \"pypi.org\"", word, PresetNames())
		if near := policy.Nearest(strings.ToLower(dom), presetNames()); near != "" {
			msg = fmt.Sprintf("%q is neither a preset nor a full host name: did you mean the preset %s? (presets: %s; or write the whole name, e.g. \"pypi.org\")", word, near, PresetNames())
		}
		return "", errors.New(msg)
	}
	return r.String(), nil
}

// ExpandHosts turns host words into the host list a policy holds: a preset name (pypi, npm,
// github) becomes its hosts, any other word must be a host pattern (CheckHost). The hosts come
// back in canonical form and in order, each once. Every bad word is reported, each with its fix.
func ExpandHosts(words []string) ([]string, error) {
	var out []string
	var errs []error
	add := func(h string) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, w := range words {
		if p, ok := policy.Preset(strings.ToLower(strings.TrimSpace(w))); ok {
			for _, h := range p.Hosts {
				c, err := CheckHost(h)
				if err != nil { // a preset this check refuses is a bug in mcpsandbox
					return nil, fmt.Errorf("preset %s: %w (a bug in mcpsandbox)", p.Name, err)
				}
				add(c)
			}
			continue
		}
		h, err := CheckHost(strings.TrimSpace(w))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		add(h)
	}
	return out, errors.Join(errs...)
}

// presetsIn lists the presets every host of which is in hosts.
func presetsIn(hosts []string) []string {
	var out []string
	for _, p := range policy.NetworkPresets {
		all := true
		for _, h := range p.Hosts {
			all = all && slices.Contains(hosts, h)
		}
		if all {
			out = append(out, p.Name)
		}
	}
	return out
}

// presetHosts are the hosts of the named presets.
func presetHosts(names []string) []string {
	var out []string
	for _, n := range names {
		if p, ok := policy.Preset(n); ok {
			out = append(out, p.Hosts...)
		}
	}
	return out
}

// Network answers. The wizard's first network question picks one of these.
const (
	NetChoiceNone  = "none"
	NetChoiceHosts = "only these hosts"
	NetChoiceAll   = "every host"
)

// netChoice is what the answers say about the network now.
func (a *Answers) netChoice() string {
	all := a.Network
	if n, ok := a.Own().(NetAnswers); ok {
		all = n.AllHosts(a)
	}
	switch {
	case len(a.Hosts) > 0:
		return NetChoiceHosts
	case all:
		return NetChoiceAll
	}
	return NetChoiceNone
}

// network is the `network` value the answers give the scheme's section: the scheme's answers
// say it (NetAnswers); a scheme without takes no host list.
func (a *Answers) network() (policy.Network, error) {
	hosts, err := ExpandHosts(a.Hosts)
	if err != nil {
		return policy.Network{}, fmt.Errorf("network hosts: %w", err)
	}
	if len(a.Hosts) > 0 && len(hosts) == 0 {
		return policy.Network{}, fmt.Errorf("the network host list is empty: name at least one host or preset (%s)", PresetNames())
	}
	if n, ok := a.Own().(NetAnswers); ok {
		return n.Network(a, hosts)
	}
	if len(hosts) > 0 {
		return policy.Network{}, fmt.Errorf("network: the %s scheme takes no host list (only allowlist and docker reach hosts through serve's egress proxy): remove --network-hosts", a.Scheme)
	}
	return policy.Network{}, nil
}
