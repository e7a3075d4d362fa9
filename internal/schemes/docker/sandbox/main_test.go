package sandbox

import (
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// TestMain gives the package its own HOME and XDG dirs (the engine is still found: DOCKER_HOST,
// DOCKER_CONFIG and the current docker context are kept) and lists, at the end of the run and
// even without -v, every test that skipped because no engine answers or the test image is missing.
func TestMain(m *testing.M) { testenv.Main(m, "internal/schemes/docker/sandbox") }
