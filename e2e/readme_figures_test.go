package e2e

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The README's figures are the binary's: the number of scenarios `harness --list` shows and the
// number of controls `harness --controls` runs for the default scheme (the registry's, which the
// binary runs). A scenario or control
// added without the README following fails here, naming the line.
func TestReadmeFiguresFromTheBinary(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	list, _, code := runCmd(t, exec.Command(binPath, "harness", "--list"))
	if code != 0 {
		t.Fatalf("harness --list: exit %d", code)
	}
	scenarios := 0
	for _, l := range strings.Split(strings.SplitN(list, "\n\n", 2)[0], "\n")[1:] {
		if strings.TrimSpace(l) != "" {
			scenarios++
		}
	}
	sc, err := schemes.Lookup(policy.Schemes[0]) // the scheme harness --controls runs by default
	if err != nil {
		t.Fatal(err)
	}
	nControls := len(sc.Controls())
	if scenarios < 50 || nControls < 10 {
		t.Fatalf("counted %d scenarios and %d controls: the listing's format changed", scenarios, nControls)
	}
	check := func(re string, want int, what string) {
		t.Helper()
		ms := regexp.MustCompile(re).FindAllStringSubmatchIndex(readme, -1)
		if len(ms) == 0 {
			t.Errorf("README has no %q any more: update this test", re)
		}
		for _, m := range ms {
			if got, _ := strconv.Atoi(readme[m[2]:m[3]]); got != want {
				t.Errorf("README.md:%d says %d %s; the binary has %d: update it", strings.Count(readme[:m[0]], "\n")+1, got, what, want)
			}
		}
	}
	check(`\d+ of (\d+) scenarios`, scenarios, "scenarios")
	check(`all (\d+) but the`, scenarios, "scenarios")
	check(`N/(\d+) scenarios done`, scenarios, "scenarios")
	check(`embedded in the binary \((\d+) of them`, scenarios, "scenarios") // trial46 F7: both said 118 of 120
	check(`all (\d+) controls fired`, nControls, "controls")
}
