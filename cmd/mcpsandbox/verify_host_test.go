package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
)

// verify's host table fits 120 columns: a long layer name goes on a line of its own instead of
// widening the name column for every row, and long values and advice are wrapped under the
// value column, every word kept (trial35 F13: a 60-wide name column, one line of 675).
// Catches verify-host-table-wide.
func TestVerifyHostTableFits(t *testing.T) {
	long := strings.Repeat("the engine's runtimes and what each of them means for a call, ", 11)
	checks := []verify.Check{
		{Name: "kernel", OK: true, Value: "Linux 6.1"},
		{Name: "layer: landlock: signals and abstract unix sockets scoped", OK: true, Value: "yes"},
		{Name: "docker engine", OK: false, Value: long, Advice: "start it: " + long},
	}
	var b bytes.Buffer
	writeHost(&b, checks)
	out := b.String()
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if utf8.RuneCountInString(l) > hostWidth {
			t.Errorf("a line of %d columns: %q", utf8.RuneCountInString(l), l)
		}
	}
	for _, want := range []string{
		"   ok  kernel         Linux 6.1\n",
		"   ok  layer: landlock: signals and abstract unix sockets scoped\n                      yes\n",
		"   --  docker engine  the engine's runtimes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Join(strings.Fields(out), " "); !strings.Contains(got, strings.Join(strings.Fields(long), " ")+" start it: "+strings.Join(strings.Fields(long), " ")) {
		t.Errorf("words lost in wrapping:\n%s", out)
	}
}
