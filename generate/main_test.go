package generate

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// TestMain gives the package its own HOME, XDG dirs and a PATH without client CLIs: client
// detection, init's writes and its start check must not see the developer's own.
func TestMain(m *testing.M) { testenv.Main(m, "generate") }

// The hermetic PATH takes out every binary client detection looks for: a client added to the
// catalogue with a new binary must be added to testenv.ClientCLIs, or the suite would detect it
// on a developer's machine.
func TestHermeticPathCoversDetection(t *testing.T) {
	for _, c := range Clients() {
		for _, d := range c.Detect {
			if bin, ok := strings.CutPrefix(d, "bin:"); ok && !slices.Contains(testenv.ClientCLIs, bin) {
				t.Errorf("client %s is detected by the binary %q, which testenv.ClientCLIs does not take off the test PATH", c.ID, bin)
			}
		}
	}
	if got := Detect(mustHostEnv(t)); len(got) != 0 {
		t.Errorf("clients detected inside the test environment: %v (HOME %s)", got, mustHostEnv(t).Home)
	}
}

func mustHostEnv(t *testing.T) Env {
	t.Helper()
	e, err := HostEnv(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return e
}
