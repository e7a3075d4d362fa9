package schemes

import (
	"context"
	"os"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
)

// The doctor reports every fact the schemes promise (each scheme's Host rows), each with a value, and the namespace probes agree
// with what this process can really do.
func TestDoctor(t *testing.T) {
	cs := Doctor(context.Background())
	names := map[string]verify.Check{}
	for _, c := range cs {
		names[c.Name] = c
		if c.Value == "" {
			t.Errorf("%s has no value", c.Name)
		}
	}
	for _, want := range []string{"kernel", "user", "landlock", "user namespaces", "pid namespace", "network namespace", "seccomp", "cgroups", "docker engine"} {
		if _, ok := names[want]; !ok {
			t.Errorf("doctor lacks %s", want)
		}
	}
	if os.Geteuid() == 0 && !names["network namespace"].OK {
		t.Errorf("root cannot make a network namespace? %+v", names["network namespace"])
	}
}
