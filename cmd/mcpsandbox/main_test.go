package main

import (
	"os"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// TestMain lets this test binary stand in for mcpsandbox when a command re-executes itself
// (os.Executable: verify's measured layers, explain, the exec helper). Without it the re-executed
// binary would run the tests again, and every test that re-executes would recurse.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Getenv("MCPSANDBOX_CMD_TEST_CHILD") == "1" || os.Args[1] == helper.Arg) {
		main()
		os.Exit(0)
	}
	os.Setenv("MCPSANDBOX_CMD_TEST_CHILD", "1") // inherited by re-executions only
	// Its own HOME, XDG dirs and a PATH without client CLIs: a developer's real policy or an
	// installed Claude Code must not change what init or serve do here.
	testenv.Main(m, "cmd/mcpsandbox")
}
