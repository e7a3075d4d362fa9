package harness

import "testing"

// offerOf is the registered scheme's offer by name, set by offers_ext_test.go: the harness's
// own tests cannot import the registry (it imports the harness), its external tests can, and
// both are linked into one test binary.
var offerOf func(scheme string) (*Offer, error)

// OfferOf is the named scheme's offer, from the registry.
func OfferOf(t testing.TB, scheme string) *Offer {
	t.Helper()
	if offerOf == nil {
		t.Fatal("no registry in this test binary (offers_ext_test.go sets it)")
	}
	o, err := offerOf(scheme)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// SetOfferOf is how the external tests hand the registry in.
func SetOfferOf(f func(scheme string) (*Offer, error)) { offerOf = f }
