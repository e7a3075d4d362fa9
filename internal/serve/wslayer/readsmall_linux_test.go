package wslayer

import (
	"os"
	"path/filepath"
	"testing"
)

// A budget charged after reads made outside the follower's loop can leave less than nothing:
// readSmall reads nothing more and says the file is cut (the commit then refuses what it did
// not judge), where it sliced b[:limit] with limit < 0 and panicked serve mid-commit (review41
// #3). Red without the clamp (mutant wslayer-read-negative-limit): the panic.
func TestReadSmallBudgetBelowZero(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.js")
	if err := os.WriteFile(p, []byte("require('./b.js')\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{-948, -1, 0} {
		b, cut, err := readSmall(p, limit)
		if err != nil || len(b) != 0 || !cut {
			t.Errorf("readSmall(limit %d) = %q, cut %v, %v; want nothing read, cut", limit, b, cut, err)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.js")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, cut, err := readSmall(empty, -5); err != nil || len(b) != 0 || cut {
		t.Errorf("an empty file with nothing left: %q, cut %v, %v; want nothing, not cut", b, cut, err)
	}
}
