package generate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The policy's header says which commands check it. With a space in its path (macOS's default,
// ~/Library/Application Support/mcpsandbox/policy.toml; an XDG_CONFIG_HOME with one, as tried)
// the command pasted as written ran `verify --policy /Users/me/Library/Application`: the path is
// now one shell word, as init's own "next:" line already quoted it.
func TestPolicyHeaderQuotesThePath(t *testing.T) {
	in := filepath.Join("..", "schemes", "allowlist", "testdata", "render", "allowlist-min.toml")
	src, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.Parse(in, src)
	if err != nil {
		t.Fatal(err)
	}
	const path = "/Users/me/Library/Application Support/mcpsandbox/policy.toml"
	got, err := generate.RenderPolicy(p, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# Check it:   mcpsandbox verify --policy '" + path + "'\n",
		"# Explain it: mcpsandbox explain --policy '" + path + "'\n",
	} {
		if !strings.Contains(string(got), want) {
			t.Errorf("the header lacks %q:\n%.400s", want, got)
		}
	}
}
