package allowlist

import (
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The persistence detector watches the policy's own protect entries: the adapter hands them
// over (the harness no longer reads the allowlist section itself).
func TestExpectCarriesProtect(t *testing.T) {
	p := policy.Default(policy.SchemeAllowlist)
	p.Allowlist.Protect = []string{"scripts/hooks", "!node_modules"}
	if got := (adapter{}).Expect(p).Protect; !slices.Equal(got, p.Allowlist.Protect) {
		t.Fatalf("Expect.Protect = %v, want %v", got, p.Allowlist.Protect)
	}
}
