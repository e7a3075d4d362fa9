package policy

import (
	"slices"
	"strconv"
	"strings"
)

// Section is one scheme's part of the policy file (its [table]), as the code every scheme
// shares sees it: defaults, validation, the hash payload and the `network` key. Each section
// type registers itself in its own file (registerSection); nothing else in this package, and
// nothing outside it, switches on a scheme's name.
type Section interface {
	// Network is the effective value of the section's `network` key; ok is false when the
	// scheme has no such key.
	Network() (n Network, ok bool)
	// SetNetwork sets the `network` key; false when the scheme has none.
	SetNetwork(n Network) bool
	// Summary is the section in a few lines (init's preview), one per setting.
	Summary() []string

	defaults()                                // the section's built-in values
	beforeDecode()                            // clear what a file replaces rather than merges into
	afterDecode(defined func(...string) bool) // normalise after a file was decoded
	validate(active bool) []Problem           // active: the policy's scheme is this one
	payload() any                             // the effective section, for Hash and Marshal
	deepCopy()                                // replace shared lists and maps by copies (Clone)
}

// limitsDefaulter is a section whose scheme needs other defaults for some common limits than
// the ones every scheme starts from; they apply where the file leaves those limits unset.
type limitsDefaulter interface {
	limitDefaults(l *Limits, defined func(...string) bool)
}

// schemeLimitDefaults applies the active section's own limit defaults, if it has any.
func (p *Policy) schemeLimitDefaults(defined func(...string) bool) {
	if d, ok := p.Section().(limitsDefaulter); ok {
		d.limitDefaults(&p.Limits, defined)
	}
}

type sectionKind struct {
	name  string
	order int // where the product presents the scheme
	of    func(*Policy) Section
}

var sectionKinds []sectionKind

// registerSection adds a scheme's section; of returns the section inside a policy. Called
// from the init of the section's own file.
func registerSection(name string, order int, of func(*Policy) Section) {
	sectionKinds = append(sectionKinds, sectionKind{name, order, of})
	slices.SortStableFunc(sectionKinds, func(a, b sectionKind) int { return a.order - b.order })
	Schemes = Schemes[:0:0]
	for _, k := range sectionKinds {
		Schemes = append(Schemes, k.name)
	}
}

// Schemes lists every scheme in the order the product presents them.
var Schemes []string

// Section is the section of the policy's scheme (nil for an unknown scheme).
func (p *Policy) Section() Section { return p.SectionOf(p.Scheme) }

// SectionOf is the named scheme's section of p (nil for an unknown scheme).
func (p *Policy) SectionOf(scheme string) Section {
	for _, k := range sectionKinds {
		if k.name == scheme {
			return k.of(p)
		}
	}
	return nil
}

// WorkspaceDir is the host directory the policy's calls work in, as its section says: "" when
// the section names none (a section says it by a WorkspaceDir method; serve's start log asks).
func (p *Policy) WorkspaceDir() string {
	if w, ok := p.Section().(interface{ WorkspaceDir() string }); ok {
		return w.WorkspaceDir()
	}
	return ""
}

// eachSection calls f with every registered section of p, in the product's order.
func (p *Policy) eachSection(f func(name string, s Section)) {
	for _, k := range sectionKinds {
		f(k.name, k.of(p))
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// schemeChoices is the scheme names quoted for a message: `"a", "b" or "c"`.
func schemeChoices() string {
	q := make([]string, len(Schemes))
	for i, s := range Schemes {
		q[i] = strconv.Quote(s)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// NetworkTakes reports whether the named scheme's `network` key takes a value of mode m, as
// validation judges it; false for a scheme without the key, or unknown.
func NetworkTakes(scheme string, m NetMode) bool {
	sec := Default(scheme).Section()
	n := Network{Mode: m}
	switch m {
	case NetNamed:
		n.Name = "bridge"
	case NetHosts:
		n, _ = NetworkHosts("example.com")
	}
	if sec == nil || !sec.SetNetwork(n) {
		return false
	}
	for _, pr := range sec.validate(true) {
		if strings.HasPrefix(pr.Key, scheme+".network") {
			return false
		}
	}
	return true
}

// SchemesTaking lists the schemes whose `network` key takes a value of mode m.
func SchemesTaking(m NetMode) []string {
	var out []string
	for _, s := range Schemes {
		if NetworkTakes(s, m) {
			out = append(out, s)
		}
	}
	return out
}
