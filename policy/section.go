package policy

import (
	"slices"
	"strconv"
	"strings"
)

// Section is one scheme's part of the policy file (its [table]), as the code every scheme
// shares sees it: defaults, validation, the hash payload and the `network` key. Each scheme's
// section type lives in the scheme's own directory (internal/schemes/NAME/section) and registers itself
// there (RegisterSection); nothing in this package, and nothing outside the scheme's
// directory, switches on a scheme's name. A section is a pointer to a struct whose TOML tags
// are the [table]'s keys: Parse decodes the file into it.
type Section interface {
	// Network is the effective value of the section's `network` key; ok is false when the
	// scheme has no such key.
	Network() (n Network, ok bool)
	// SetNetwork sets the `network` key; false when the scheme has none.
	SetNetwork(n Network) bool
	// Summary is the section in a few lines (init's preview), one per setting.
	Summary() []string

	Defaults()                                // the section's built-in values
	BeforeDecode()                            // clear what a file replaces rather than merges into
	AfterDecode(defined func(...string) bool) // normalise after a file was decoded (defined: as MetaData.IsDefined, keys from the file's top)
	Validate(active bool) []Problem           // active: the policy's scheme is this one
	Payload() any                             // the effective section, for Hash and Marshal
	Copy() Section                            // a deep copy: lists and maps not shared (Clone)
}

// LimitsDefaulter is a section whose scheme needs other defaults for some common limits than
// the ones every scheme starts from; they apply where the file leaves those limits unset.
type LimitsDefaulter interface {
	LimitDefaults(l *Limits, defined func(...string) bool)
}

// schemeLimitDefaults applies the active section's own limit defaults, if it has any.
func (p *Policy) schemeLimitDefaults(defined func(...string) bool) {
	if d, ok := p.Section().(LimitsDefaulter); ok {
		d.LimitDefaults(&p.Limits, defined)
	}
}

type sectionKind struct {
	name  string
	order int            // where the product presents the scheme
	new   func() Section // a zero section of the scheme's type
}

var sectionKinds []sectionKind

// RegisterSection adds a scheme's section: its table's name, where the product presents it
// (lower first) and a constructor of its zero value. Called from the init of the section's own
// package; a name registered twice is a bug in the build and panics at start-up.
func RegisterSection(name string, order int, new func() Section) {
	for _, k := range sectionKinds {
		if k.name == name {
			panic("policy: section " + name + " registered twice")
		}
	}
	sectionKinds = append(sectionKinds, sectionKind{name, order, new})
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
	return p.sections[scheme]
}

// WorkspaceDir is the host directory the policy's calls work in, as its section says: "" when
// the section names none (a section says it by a WorkspaceDir method; serve's start log asks).
func (p *Policy) WorkspaceDir() string {
	if w, ok := p.Section().(interface{ WorkspaceDir() string }); ok {
		return w.WorkspaceDir()
	}
	return ""
}

// WorkspaceMount is the host directory the policy's calls see as their workspace and whether
// they may write it ("" when none): a section says so by a WorkspaceMount method (docker's, whose
// mount may be read-only), else its WorkspaceDir is written to.
func (p *Policy) WorkspaceMount() (dir string, writable bool) {
	if w, ok := p.Section().(interface{ WorkspaceMount() (string, bool) }); ok {
		return w.WorkspaceMount()
	}
	dir = p.WorkspaceDir()
	return dir, dir != ""
}

// WriteDirs are the host directories besides the workspace that sandboxed code may write in, as
// the section says (a WriteDirs method: wrap's [wrap].write); serve's own files must not be there.
func (p *Policy) WriteDirs() []string {
	if w, ok := p.Section().(interface{ WriteDirs() []string }); ok {
		return w.WriteDirs()
	}
	return nil
}

// ReadDirs are the directories beyond the system's and the workspace that the active scheme's
// sandboxed code may read (allowlist.read_paths, wrap.read), and the key that names them.
func (p *Policy) ReadDirs() (key string, dirs []string) {
	if r, ok := p.Section().(interface{ ReadDirs() (string, []string) }); ok {
		return r.ReadDirs()
	}
	return "", nil
}

// SectionFor is the named scheme's section of p, made (zero, not defaults) if p has none yet
// (a Policy built as a literal rather than by Default or Parse); nil for an unregistered name.
// A scheme's typed accessor (its section package's Of) reads through it.
func (p *Policy) SectionFor(scheme string) Section {
	if s, ok := p.sections[scheme]; ok {
		return s
	}
	for _, k := range sectionKinds {
		if k.name == scheme {
			if p.sections == nil {
				p.sections = map[string]Section{}
			}
			p.sections[scheme] = k.new()
			return p.sections[scheme]
		}
	}
	return nil
}

// eachSection calls f with every registered section of p, in the product's order.
func (p *Policy) eachSection(f func(name string, s Section)) {
	for _, k := range sectionKinds {
		f(k.name, p.SectionFor(k.name))
	}
}

// newSections is a zero section of every registered scheme.
func newSections() map[string]Section {
	m := make(map[string]Section, len(sectionKinds))
	for _, k := range sectionKinds {
		m[k.name] = k.new()
	}
	return m
}

// OnOff is a switch as a summary row says it.
func OnOff(b bool) string {
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
	for _, pr := range sec.Validate(true) {
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
