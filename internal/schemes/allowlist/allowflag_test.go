package allowlist

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// --allow is comma-separated or repeated: a second --allow adds to the first (it used to
// replace it, silently leaving the first command out of the policy).
func TestAllowFlagRepeated(t *testing.T) {
	var a Answers
	fl := pflag.NewFlagSet("init", pflag.ContinueOnError)
	a.Flags(fl)
	if err := fl.Parse([]string{"--allow", "wc", "--allow", "sort,grep", "--allow", ""}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"wc", "sort", "grep"}; !slices.Equal(a.Allow, want) {
		t.Fatalf("--allow wc --allow sort,grep = %q, want %q", a.Allow, want)
	}
}
