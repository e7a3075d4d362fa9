package policy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// toySection is a scheme section that exists only in this test: registering it is all it
// takes for defaults, decoding, validation, the hash, Marshal and the scheme list to know it.
type toySection struct {
	Size int            `toml:"size" json:"size"`
	Net  policy.Network `toml:"network" json:"network"`
}

func (s *toySection) Network() (policy.Network, bool)  { return s.Net, true }
func (s *toySection) SetNetwork(n policy.Network) bool { s.Net = n; return true }
func (s *toySection) Defaults()                        { *s = toySection{Size: 3} }
func (s *toySection) BeforeDecode()                    {}
func (s *toySection) AfterDecode(func(...string) bool) {}
func (s *toySection) Payload() any                     { return *s }
func (s *toySection) Copy() policy.Section             { c := *s; return &c }
func (s *toySection) Summary() []string                { return []string{fmt.Sprintf("size %d", s.Size)} }
func (s *toySection) Validate(active bool) []policy.Problem {
	if active && s.Size < 1 {
		return []policy.Problem{{Key: "toy.size", Msg: "must be positive", Fix: "use e.g. 3"}}
	}
	return nil
}

// withToy registers the toy scheme for the test.
func withToy(t *testing.T) {
	t.Helper()
	t.Cleanup(policy.RegisterSectionForTest("toy", 15, func() policy.Section { return new(toySection) }))
}

func toyOf(p *policy.Policy) *toySection { return p.SectionOf("toy").(*toySection) }

func TestSectionRegistryDrivesSharedCode(t *testing.T) {
	withToy(t)
	if want := []string{alsec.Name, "toy", dksec.Name, e2bsec.Name, wrapsec.Name}; !slices.Equal(policy.Schemes, want) {
		t.Fatalf("Schemes = %v, want %v (registration order)", policy.Schemes, want)
	}
	p := policy.Default("toy")
	if toyOf(p).Size != 3 {
		t.Fatalf("Default did not fill the toy section: %+v", toyOf(p))
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("a default toy policy: %v", err)
	}
	h := p.Hash()
	toyOf(p).Size = 0
	err := p.Validate()
	if err == nil || !strings.Contains(err.Error(), "toy.size: must be positive") {
		t.Fatalf("validation does not reach the toy section: %v", err)
	}
	if p.Hash() == h {
		t.Fatal("the hash does not cover the toy section")
	}
	toyOf(p).Size = 5
	if c := p.Clone(); toyOf(c) == toyOf(p) || toyOf(c).Size != 5 {
		t.Fatal("Clone shares the toy section, or loses it")
	}
	n, _ := policy.NetworkHosts("pypi.org")
	if !p.Section().SetNetwork(n) {
		t.Fatal("SetNetwork refused")
	}
	if got, ok := p.Section().Network(); !ok || got.String() != `["pypi.org"]` {
		t.Fatalf("Network = %v %v", got, ok)
	}
	b, err := policy.Marshal(p)
	if err != nil || !strings.Contains(string(b), "[toy]") || !strings.Contains(string(b), "size = 5") {
		t.Fatalf("Marshal does not write the toy section: %v\n%s", err, b)
	}
	if err := policy.Default("nope").Validate(); err == nil || !strings.Contains(err.Error(), `use "allowlist", "toy", "docker", "e2b" or "wrap"`) {
		t.Fatalf("the scheme list in messages does not come from the registry: %v", err)
	}
}

// TestParseDecodesARegisteredSection: the file's [toy] table is decoded into the toy section,
// its unknown keys are reported with a suggestion, as for any section: nothing in the policy
// package names the toy scheme.
func TestParseDecodesARegisteredSection(t *testing.T) {
	withToy(t)
	p, err := policy.Parse("t.toml", []byte("version = 1\nscheme = \"toy\"\nname = \"x\"\n[toy]\nsize = 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if toyOf(p).Size != 7 {
		t.Fatalf("[toy] size = 7 decoded as %d", toyOf(p).Size)
	}
	b, _ := policy.Marshal(p)
	if back, err := policy.Parse("back.toml", b); err != nil || back.Hash() != p.Hash() {
		t.Fatalf("Marshal's output does not load back as the same policy: %v\n%s", err, b)
	}
	_, err = policy.Parse("t.toml", []byte("version = 1\nscheme = \"toy\"\nname = \"x\"\n[toy]\nsiez = 7\n"))
	if err == nil || !strings.Contains(err.Error(), "t.toml:5: toy.siez: unknown key") || !strings.Contains(err.Error(), "did you mean toy.size?") {
		t.Fatalf("an unknown key in [toy]: %v", err)
	}
	_, err = policy.Parse("t.toml", []byte("version = 1\nscheme = \"toy\"\nname = \"x\"\n[toy]\nsize = \"big\"\n"))
	if err == nil || !strings.Contains(err.Error(), "t.toml:5") {
		t.Fatalf("a wrongly typed value in [toy]: %v", err)
	}
}

// Every scheme name has a section, made by Default.
func TestEverySchemeHasASection(t *testing.T) {
	p := policy.Default("")
	for _, s := range policy.Schemes {
		if p.SectionOf(s) == nil {
			t.Errorf("scheme %q has no section", s)
		}
	}
	if p.Section() != nil || p.SectionOf("nope") != nil {
		t.Error("an unknown scheme has a section")
	}
	a, _ := p.SectionOf(alsec.Name).Network()
	if a.Mode != policy.NetNone {
		t.Errorf("allowlist default network %v", a)
	}
	if _, ok := p.SectionOf(e2bsec.Name).Network(); ok {
		t.Error("e2b reports a network key")
	}
}

func TestNetworkTakes(t *testing.T) {
	for m, want := range map[policy.NetMode][]string{
		policy.NetNone:  {alsec.Name, dksec.Name, wrapsec.Name},
		policy.NetAll:   {alsec.Name, wrapsec.Name},
		policy.NetNamed: {dksec.Name},
		policy.NetHosts: {alsec.Name, dksec.Name, wrapsec.Name},
	} {
		if got := policy.SchemesTaking(m); !slices.Equal(got, want) {
			t.Errorf("SchemesTaking(%d) = %v, want %v", m, got, want)
		}
	}
	if policy.NetworkTakes("nope", policy.NetNone) {
		t.Error("an unknown scheme takes a network")
	}
}

// TestWorkspaceDirAsksTheSection: serve's start log names the workspace through the section,
// never a scheme's field: the allowlist's for an allowlist policy, none for a section without one.
func TestWorkspaceDirAsksTheSection(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Workspace = "/w"
	if got := p.WorkspaceDir(); got != "/w" {
		t.Fatalf("allowlist policy: WorkspaceDir = %q, want /w", got)
	}
	withToy(t)
	p = policy.Default("toy")
	if got := p.WorkspaceDir(); got != "" {
		t.Fatalf("a section without a workspace: WorkspaceDir = %q, want \"\"", got)
	}
}
