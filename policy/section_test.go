package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// toySection is a scheme section that exists only in this test: registering it is all it
// takes for defaults, validation, the hash, Marshal and the scheme list to know it.
type toySection struct {
	Size int     `toml:"size" json:"size"`
	Net  Network `toml:"network" json:"network"`
}

func (s *toySection) Network() (Network, bool)         { return s.Net, true }
func (s *toySection) SetNetwork(n Network) bool        { s.Net = n; return true }
func (s *toySection) defaults()                        { *s = toySection{Size: 3} }
func (s *toySection) beforeDecode()                    {}
func (s *toySection) afterDecode(func(...string) bool) {}
func (s *toySection) payload() any                     { return *s }
func (s *toySection) deepCopy()                        {}
func (s *toySection) Summary() []string                { return []string{fmt.Sprintf("size %d", s.Size)} }
func (s *toySection) validate(active bool) []Problem {
	if active && s.Size < 1 {
		return []Problem{{Key: "toy.size", Msg: "must be positive", Fix: "use e.g. 3"}}
	}
	return nil
}

// withToy registers the toy scheme for the test; its section lives beside the policy (one per
// test), since Policy has no field for it.
func withToy(t *testing.T) *toySection {
	t.Helper()
	kinds, schemes := slices.Clone(sectionKinds), slices.Clone(Schemes)
	t.Cleanup(func() { sectionKinds, Schemes = kinds, schemes })
	toy := &toySection{}
	registerSection("toy", 15, func(*Policy) Section { return toy })
	return toy
}

func TestSectionRegistryDrivesSharedCode(t *testing.T) {
	toy := withToy(t)
	if want := []string{SchemeAllowlist, "toy", SchemeDocker, SchemeE2B, SchemeWrap}; !slices.Equal(Schemes, want) {
		t.Fatalf("Schemes = %v, want %v (registration order)", Schemes, want)
	}
	p := Default("toy")
	if toy.Size != 3 {
		t.Fatalf("Default did not fill the toy section: %+v", toy)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("a default toy policy: %v", err)
	}
	h := p.Hash()
	toy.Size = 0
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "toy.size: must be positive") {
		t.Fatalf("validation does not reach the toy section: %v", err)
	}
	if p.Hash() == h {
		t.Fatal("the hash does not cover the toy section")
	}
	toy.Size = 5
	n, _ := NetworkHosts("pypi.org")
	if !p.Section().SetNetwork(n) {
		t.Fatal("SetNetwork refused")
	}
	if got, ok := p.Section().Network(); !ok || got.String() != `["pypi.org"]` {
		t.Fatalf("Network = %v %v", got, ok)
	}
	b, err := Marshal(p)
	if err != nil || !strings.Contains(string(b), "[toy]") || !strings.Contains(string(b), "size = 5") {
		t.Fatalf("Marshal does not write the toy section: %v\n%s", err, b)
	}
	if err := Default("nope").Validate(); err == nil || !strings.Contains(err.Error(), `use "allowlist", "toy", "docker", "e2b" or "wrap"`) {
		t.Fatalf("the scheme list in messages does not come from the registry: %v", err)
	}
}

// Every scheme name has a section, and the sections are the policy's own fields.
func TestEverySchemeHasASection(t *testing.T) {
	p := Default("")
	for _, s := range Schemes {
		if p.SectionOf(s) == nil {
			t.Errorf("scheme %q has no section", s)
		}
	}
	if p.Section() != nil || p.SectionOf("nope") != nil {
		t.Error("an unknown scheme has a section")
	}
	a, _ := p.SectionOf(SchemeAllowlist).Network()
	if a.Mode != NetNone {
		t.Errorf("allowlist default network %v", a)
	}
	if _, ok := p.SectionOf(SchemeE2B).Network(); ok {
		t.Error("e2b reports a network key")
	}
}

func TestNetworkTakes(t *testing.T) {
	for m, want := range map[NetMode][]string{
		NetNone:  {SchemeAllowlist, SchemeDocker, SchemeWrap},
		NetAll:   {SchemeAllowlist, SchemeWrap},
		NetNamed: {SchemeDocker},
		NetHosts: {SchemeAllowlist, SchemeDocker, SchemeWrap},
	} {
		if got := SchemesTaking(m); !slices.Equal(got, want) {
			t.Errorf("SchemesTaking(%d) = %v, want %v", m, got, want)
		}
	}
	if NetworkTakes("nope", NetNone) {
		t.Error("an unknown scheme takes a network")
	}
}

// TestWorkspaceDirAsksTheSection: serve's start log names the workspace through the section,
// never a scheme's field: the allowlist's for an allowlist policy, none for a section without one.
func TestWorkspaceDirAsksTheSection(t *testing.T) {
	p := Default(SchemeAllowlist)
	p.Allowlist.Workspace = "/w"
	if got := p.WorkspaceDir(); got != "/w" {
		t.Fatalf("allowlist policy: WorkspaceDir = %q, want /w", got)
	}
	withToy(t)
	p.Scheme = "toy"
	if got := p.WorkspaceDir(); got != "" {
		t.Fatalf("a section without a workspace: WorkspaceDir = %q, want \"\"", got)
	}
}
