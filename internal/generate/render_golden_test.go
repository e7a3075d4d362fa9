package generate_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The commented policy init writes is fixed text: every internal/schemes/NAME/testdata/render/CASE.toml,
// loaded and rendered, is byte for byte CASE.golden beside it (go test ./internal/generate -run
// TestRenderPolicyGolden -update rewrites them). The cases cover every branch of every scheme's
// template, and each scheme of the registry has at least one, in its own directory: its
// template comes from its entry, handed over by the schemes package, as in the binary.
func TestRenderPolicyGolden(t *testing.T) {
	cases, err := filepath.Glob(filepath.Join("..", "schemes", "*", "testdata", "render", "*.toml"))
	if err != nil || len(cases) == 0 {
		t.Fatalf("no cases in internal/schemes/*/testdata/render: %v", err)
	}
	seen := map[string]bool{}
	for _, in := range cases {
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		p, err := policy.Parse(in, src)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		seen[p.Scheme] = true
		got, err := generate.RenderPolicy(p, "/etc/mcpsandbox/"+filepath.Base(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		golden := strings.TrimSuffix(in, ".toml") + ".golden"
		if updateGolden() {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s renders differently from %s:\n%s", in, golden, generate.Diff(golden, string(want), string(got)))
		}
	}
	for _, s := range schemes.All {
		if !seen[s.Name] {
			t.Errorf("scheme %s has no case in schemes/%s/testdata/render", s.Name, s.Name)
		}
	}
}

// updateGolden is the package's -update flag (generate_test.go declares it).
func updateGolden() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}
