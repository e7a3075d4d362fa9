package harness_test

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
)

func init() {
	harness.SetOfferOf(func(name string) (*harness.Offer, error) {
		sc, err := schemes.Lookup(name)
		if err != nil {
			return nil, err
		}
		if sc.Adapter == nil {
			return nil, fmt.Errorf("the %s scheme has no harness adapter in this build", name)
		}
		return sc.Adapter.Offer(), nil
	})
}
