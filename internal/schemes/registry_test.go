package schemes

import (
	"context"
	"os"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b"
	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
)

// What init and verify used to ask by scheme name now sits in the entries: the e2b key check,
// the docker engine check, the allowlist's measured layers and its built-in policy's cleanup.
func TestEntriesCarryInitAndVerifyParts(t *testing.T) {
	get := func(name string) *scheme.Scheme {
		s, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Setenv("TOY_E2B_KEY", "")
	e := get(e2bsec.Name)
	err := e.Needs(context.Background(), toyKey(e), scheme.Prompt{})
	if err == nil || !strings.Contains(err.Error(), "needs your E2B API key in $TOY_E2B_KEY") {
		t.Errorf("e2b needs without the key: %v", err)
	}
	t.Setenv("TOY_E2B_KEY", "k")
	if err := e.Needs(context.Background(), toyKey(e), scheme.Prompt{}); err != nil {
		t.Errorf("e2b needs with the key: %v", err)
	}
	if get(dksec.Name).Needs == nil || get(alsec.Name).Needs != nil {
		t.Error("docker must check its engine; the allowlist needs nothing of the host at init")
	}
	if get(alsec.Name).Measured == nil || get(dksec.Name).Measured == nil {
		t.Error("the allowlist measures its layers with serve's probe; docker checks the policy's image as serve does at start")
	}
	for _, s := range All {
		if s.Default == nil {
			continue
		}
		p, cleanup, err := s.Default(t.TempDir())
		if err != nil && s.Name != alsec.Name { // the allowlist needs its tools on this host
			t.Errorf("%s: Default: %v", s.Name, err)
		}
		if cleanup == nil {
			t.Errorf("%s: Default returned no cleanup", s.Name)
		}
		if err == nil && p.Scheme != s.Name {
			t.Errorf("%s: Default built a %s policy", s.Name, p.Scheme)
		}
		cleanup()
	}
	// the allowlist's built-in policy over a fresh workspace hands back its removal
	p, cleanup, err := get(alsec.Name).Default("")
	if err != nil {
		t.Skipf("no default tools here: %v", err)
	}
	ws := alsec.Of(p).Workspace
	if _, err := os.Stat(ws); err != nil {
		t.Fatalf("the fresh workspace: %v", err)
	}
	cleanup()
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Errorf("cleanup left the fresh workspace %s: %v", ws, err)
	}
}

// toyKey are e2b answers naming the key's variable TOY_E2B_KEY.
func toyKey(e *scheme.Scheme) *generate.Answers {
	a := &generate.Answers{Scheme: e.Name, Wizards: Wizards()}
	e2b.Own(a).APIKeyEnv = "TOY_E2B_KEY"
	return a
}

// bench asks the registry for each scheme's rows: a test build has them for every scheme, a
// release build for none (mutants' TestReleaseBinaryHasNoTestHooks checks the binary).
func TestEntriesCarryBenchRowsInTestBuildsOnly(t *testing.T) {
	for _, s := range All {
		if (s.Bench != nil) != testhooks.Build {
			t.Errorf("%s: bench rows present %v in a build with testhooks %v", s.Name, s.Bench != nil, testhooks.Build)
		}
	}
}
