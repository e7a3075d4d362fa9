package policy_test

import (
	"strings"
	"testing"

	_ "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	_ "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	_ "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// What the TOML decoder lets through is refused by name: a key that is known only when case is
// ignored (with [docker] and [DOCKER] both written, which one won was chance), and a table key
// given another type (env = "..." was read as no variables at all).
func TestKeysTheDecoderLetsThrough(t *testing.T) {
	const docker = "version = 1\nscheme = \"docker\"\n"
	cases := []struct{ name, src, want string }{
		{"table case", docker + "[docker]\nimage = \"a:b\"\n[DOCKER]\nimage = \"c:d\"\n", `p.toml:5: DOCKER: "DOCKER" is not a key: keys are case-sensitive (fix: write it as docker)`},
		{"top case", "Version = 1\nscheme = \"docker\"\n", `p.toml:1: Version: "Version" is not a key`},
		{"nested case", docker + "[limits]\nPids = 8\n", `p.toml:4: limits.Pids: "Pids" is not a key: keys are case-sensitive (fix: write it as limits.pids)`},
		{"env string", validAllowlist + "", ""},
		{"env not a table", strings.Replace(validAllowlist, `env = { LANG = "C.UTF-8" }`, `env = "LD_PRELOAD=/tmp/x"`, 1), `allowlist.env: must be a table, not string`},
		{"env array", strings.Replace(validAllowlist, `env = { LANG = "C.UTF-8" }`, `env = ["A=1"]`, 1), `allowlist.env: must be a table, not array`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := policy.Parse("p.toml", []byte(c.src))
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want it to say %q", err, c.want)
			}
		})
	}
}

// Several wrongly typed values are reported in line order, the same every time (the decoder
// meets a table's values in map order), and a multi-line value's lines are blanked whole
// before the retry: no made-up syntax error from its remains, and what follows it is judged.
func TestDecodeProblemsInLineOrder(t *testing.T) {
	src := "version = 1\nscheme = \"docker\"\n[limits]\npids = \"x\"\nmemory = []\n[docker]\npool = \"x\"\nimage = [\n  \"a\",\n]\nuser = 5\n"
	first := ""
	for i := range 20 {
		_, err := policy.Parse("p.toml", []byte(src))
		if err == nil {
			t.Fatal("accepted")
		}
		if i == 0 {
			first = err.Error()
			for _, want := range []string{"p.toml:4: limits.pids", "p.toml:5: limits.memory", "p.toml:7: docker.pool", "p.toml:8: docker.image", "p.toml:11: docker.user"} {
				if !strings.Contains(first, want) {
					t.Fatalf("%q missing from:\n%s", want, first)
				}
			}
			if strings.Contains(first, "expected '.' or '='") {
				t.Fatalf("a syntax error made up from a multi-line value's remains:\n%s", first)
			}
			if a, b := strings.Index(first, "p.toml:4:"), strings.Index(first, "p.toml:11:"); a > b {
				t.Fatalf("not in line order:\n%s", first)
			}
		} else if err.Error() != first {
			t.Fatalf("run %d says otherwise:\n%s\nfirst:\n%s", i, err, first)
		}
	}
}

// Problems of a policy that decodes are listed in line order too, whatever found them (unknown
// keys, then values, in turn), with those no line holds (a missing key) last (trial32 F9: line
// 60 was listed before line 59).
func TestCheckedProblemsInLineOrder(t *testing.T) {
	src := "version = 1\nscheme = \"allowlist\"\n[limits]\npids = 0\nbogus = 1\n"
	_, err := policy.Parse("p.toml", []byte(src))
	if err == nil {
		t.Fatal("accepted")
	}
	msg, last := err.Error(), -1
	for _, want := range []string{"p.toml:4: limits.pids", "p.toml:5: limits.bogus: unknown key", "p.toml: allowlist.workspace: missing"} {
		i := strings.Index(msg, want)
		if i < 0 || i < last {
			t.Fatalf("%q missing or out of line order in:\n%s", want, msg)
		}
		last = i
	}
}
