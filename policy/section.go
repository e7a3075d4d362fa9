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
	// NetworkValue is the effective value of the section's `network` key; ok is false when the
	// scheme has no such key.
	NetworkValue() (n Network, ok bool)
	// SetNetworkValue sets the `network` key; false when the scheme has none.
	SetNetworkValue(n Network) bool

	defaults()                                // the section's built-in values
	beforeDecode()                            // clear what a file replaces rather than merges into
	afterDecode(defined func(...string) bool) // normalise after a file was decoded
	validate(active bool) []Problem           // active: the policy's scheme is this one
	payload() any                             // the effective section, for Hash and Marshal
	deepCopy()                                // replace shared lists and maps by copies (Clone)
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

// eachSection calls f with every registered section of p, in the product's order.
func (p *Policy) eachSection(f func(name string, s Section)) {
	for _, k := range sectionKinds {
		f(k.name, k.of(p))
	}
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
