package schemes

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Every scheme the policy knows is registered, in the product's order.
func TestRegistryCoversEveryScheme(t *testing.T) {
	var names []string
	for _, s := range All {
		names = append(names, s.Name)
		if s.Executor == nil && s.Unavailable == "" {
			t.Errorf("%s: no executor and no reason why", s.Name)
		}
	}
	if !slices.Equal(names, policy.Schemes) {
		t.Fatalf("registry %v, policy knows %v", names, policy.Schemes)
	}
	if _, err := Lookup("nope"); err == nil || !strings.Contains(err.Error(), "allowlist") {
		t.Errorf("unknown scheme: %v", err)
	}
}

// A scheme that cannot run says so the same way everywhere: by name, OS and reason.
func TestUnavailableIsReportedByName(t *testing.T) {
	s := &scheme.Scheme{Name: "x", Unavailable: "because"}
	_, err := s.NewExecutor(policy.Default(alsec.Name), scheme.ExecOptions{})
	var ue *scheme.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "the x scheme cannot run") || !strings.Contains(err.Error(), "because") {
		t.Fatalf("NewExecutor = %v", err)
	}
	if s.Runs() == nil {
		t.Fatal("Runs() = nil for an unavailable scheme")
	}
}

// Each scheme's audit rules fire on a policy that breaks them.
func TestSchemeAuditRules(t *testing.T) {
	d := policy.Default(dksec.Name)
	dksec.Of(d).User, dksec.Of(d).ReadOnly = "", false
	dksec.Of(d).SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"})
	dksec.Of(d).Workspace, dksec.Of(d).WorkspaceWritable = "/w", true
	sc, _ := Lookup(dksec.Name)
	got := ruleIDs(verify.Audit(d, "", sc.Audit))
	for _, want := range []string{"MS201", "MS202", "MS203", "MS204", "MS205"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not reported; got %v", want, got)
		}
	}
	e := policy.Default(e2bsec.Name)
	e2bsec.Of(e).AllowInternet = true
	sc, _ = Lookup(e2bsec.Name)
	if got := ruleIDs(verify.Audit(e, "", sc.Audit)); !slices.Contains(got, "MS302") || !slices.Contains(got, "MS303") {
		t.Errorf("e2b rules: %v", got)
	}
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.ID] {
			t.Errorf("rule %s defined twice", r.ID)
		}
		seen[r.ID] = true
	}
}

func ruleIDs(fs []verify.Finding) []string {
	var r []string
	for _, f := range fs {
		r = append(r, f.Rule)
	}
	return r
}

// Every detector has a negative control in some scheme, and every control names a real
// scenario that its scheme can run.
func TestEveryDetectorHasAControl(t *testing.T) {
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*harness.Scenario{}
	for _, s := range all {
		byID[s.ID] = s
	}
	controlled := map[string]bool{}
	for _, sc := range All {
		if sc.Controls == nil {
			continue
		}
		for _, c := range sc.Controls() {
			controlled[c.Detector] = true
			s := byID[c.Scenario]
			if s == nil {
				t.Errorf("%s control for %s names unknown scenario %s", sc.Name, c.Detector, c.Scenario)
			} else if !sc.Adapter.Offer().Applies(s) {
				t.Errorf("%s control for %s uses scenario %s, which does not apply to the scheme", sc.Name, c.Detector, c.Scenario)
			}
		}
	}
	for _, d := range harness.DetectorNames() {
		if !controlled[d] {
			t.Errorf("detector %s has no negative control", d)
		}
	}
}

// The README lists every audit rule, so the documentation cannot fall behind the code.
func TestREADMEListsRules(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(b), "| "+r.ID+" | "+string(r.Severity)+" |") {
			t.Errorf("README.md does not list %s (%s)", r.ID, r.Severity)
		}
	}
}
