package allowlist

import (
	"slices"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The persistence detector watches the policy's own protect entries: the adapter hands them
// over (the harness no longer reads the allowlist section itself).
func TestExpectCarriesProtect(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Protect = []string{"scripts/hooks", "!node_modules"}
	if got := (adapter{}).Expect(p).Protect; !slices.Equal(got, alsec.Of(p).Protect) {
		t.Fatalf("Expect.Protect = %v, want %v", got, alsec.Of(p).Protect)
	}
}
