package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
)

// The exec helper runs in package initialisation, before the packages it does not use are
// initialised: a warm helper's start-up competes with the running call for the CPU, and the
// full initialisation (the Docker client's regexps, the policy's tables, the MCP SDK) roughly
// doubled it. An import that makes the helper package wait (path/filepath did) turns this red.
func TestHelperRunsBeforeHeavyInits(t *testing.T) {
	exe := binPath
	heavy := []string{"github.com/distribution/reference", "github.com/mcpsandbox/mcpsandbox/policy",
		"github.com/modelcontextprotocol/go-sdk/mcp"}
	trace := func(args ...string) string {
		cmd := exec.Command(exe, args...)
		cmd.Env = []string{"GODEBUG=inittrace=1"}
		out, _ := cmd.CombinedOutput() // the helper fails (no spec socket): only its trace matters
		return string(out)
	}
	// Negative control: run as a command, the binary initialises every heavy package, and the
	// trace names them (so their absence below means something).
	full := trace("version")
	for _, p := range heavy {
		if !strings.Contains(full, "init "+p+" @") {
			t.Fatalf("control: the full start-up's trace does not name %s; the check below would prove nothing:\n%s", p, full)
		}
	}
	got := trace(helper.Arg)
	if !strings.Contains(got, "init github.com/landlock-lsm/go-landlock/landlock @") {
		t.Fatalf("the helper's trace does not show its own dependencies initialised:\n%s", got)
	}
	for _, p := range heavy {
		if strings.Contains(got, "init "+p+" @") {
			t.Errorf("the exec helper started only after %s was initialised: it pays the whole binary's start-up", p)
		}
	}
	// What the inits before the helper allocated, against the full start-up's: deterministic for
	// a given binary (88 KB of 1.08 MB when this test was written; an import of path/filepath in
	// the helper package, which is initialised late, made it 127 KB; the full start-up's fell to
	// 865 KB when serve's patterns moved to first use).
	if hb, fb := initBytes(got), initBytes(full); hb*8 > fb {
		t.Errorf("the inits before the exec helper allocated %d bytes, more than an eighth of the full start-up's %d: "+
			"a dependency of internal/schemes/allowlist/sandbox/helper makes it wait for unrelated packages", hb, fb)
	}
}

// initBytes sums the bytes column of a GODEBUG=inittrace=1 trace
// ("init PKG @T ms, C ms clock, B bytes, N allocs").
func initBytes(trace string) int {
	total := 0
	for _, line := range strings.Split(trace, "\n") {
		f := strings.Fields(line)
		if len(f) >= 9 && f[0] == "init" && f[8] == "bytes," {
			n, _ := strconv.Atoi(f[7])
			total += n
		}
	}
	return total
}
