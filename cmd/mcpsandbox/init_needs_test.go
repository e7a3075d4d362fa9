package main

import (
	"errors"
	"slices"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
)

// After a failed check of what the scheme needs, the wizard offers another scheme (trial33
// F10), first where trying again cannot help (a missing key) or seldom does (the docker socket
// refused: a new group counts only from a new login), else after the scheme's own choices; and
// not when --scheme chose it.
func TestNeedsChoicesOfferAnotherScheme(t *testing.T) {
	given := map[string]bool{}
	o := &InitOptions{set: func(n string) bool { return given[n] }}
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{"no engine", errors.New("no engine"), []string{needsRetry, needsOther, needsQuit}},
		{"socket refused", &scheme.RetryUnlikelyError{Err: errors.New("permission denied")}, []string{needsOther, needsRetry, needsQuit}},
		{"no key", &scheme.RestartError{Err: errors.New("no key")}, []string{needsOther, needsQuit}},
	}
	for _, c := range cases {
		if got := needsChoices(o, nil, c.err); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	given["scheme"] = true
	if got := needsChoices(o, nil, cases[1].err); slices.Contains(got, needsOther) {
		t.Errorf("--scheme given, another scheme offered: %q", got)
	}
}
