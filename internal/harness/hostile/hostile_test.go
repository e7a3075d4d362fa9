//go:build linux

package hostile

import (
	"context"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, "internal/harness/hostile") }

// TestUnwrappedEveryAttemptEscapes is the negative control of every judge here: the hostile
// server started with nothing around it, so each attempt must be seen succeeding from outside.
// A judge that stays silent here would call anything contained.
func TestUnwrappedEveryAttemptEscapes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := Run(ctx, Launch{Name: "unwrapped"}, bin, Attempts)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if !o.Escaped {
			t.Errorf("%s: the unwrapped server's attempt was not seen from outside: %s", o.ID, o.Detail)
		} else {
			t.Logf("%s: escaped: %s", o.ID, o.Detail)
		}
	}
	if len(out) != len(Attempts) {
		t.Fatalf("%d outcomes for %d attempts", len(out), len(Attempts))
	}
}
