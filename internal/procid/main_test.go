package procid

import (
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// TestMain gives the package its own HOME and XDG dirs: serves note their boot in the user's
// state (internal/procid), and a test must not write the developer's.
func TestMain(m *testing.M) { testenv.Main(m, "internal/procid") }
