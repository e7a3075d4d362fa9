package main

import (
	"bytes"
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// explain's evidence line names the policy it read (trial35 F5: "--policy FILE -s SCENARIO",
// a placeholder), --default as given; for a policy the harness does not attack here (an init
// --wrap policy with no hostile test server) it says why and how instead of a command the
// harness refuses. Catches explain-evidence-placeholder.
func TestExplainEvidenceNamesThePolicy(t *testing.T) {
	t.Setenv("MCPSANDBOX_HOSTILE_SERVER", "")
	t.Setenv("PATH", t.TempDir())
	al, err := schemes.Lookup("allowlist")
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Default("allowlist")
	ts := []verify.Threat{{Threat: "x", Scenarios: []string{"planted-binary"}}}
	got := evidenceLine(&ExplainOptions{}, "/srv/my policies/p.toml", p, al, ts)
	if !strings.Contains(got, "mcpsandbox harness --policy '/srv/my policies/p.toml' (all its scenarios), or with -s ID") || strings.Contains(got, "FILE") {
		t.Errorf("a policy file: %q", got)
	}
	if got := evidenceLine(&ExplainOptions{Default: true}, "/tmp/x/policy.toml", p, al, ts); !strings.Contains(got, "mcpsandbox harness --default (") {
		t.Errorf("--default: %q", got)
	}
	wr, err := schemes.Lookup(wrapsec.Name)
	if err != nil {
		t.Fatal(err)
	}
	wp := policy.Default(wrapsec.Name)
	wrapsec.Of(wp).Command = nil // as init --wrap writes it: the client's entry names the server
	got = evidenceLine(&ExplainOptions{}, "/h/.config/mcpsandbox/wrap/fs.toml", wp, wr, nil)
	if !strings.Contains(got, "the harness does not attack this policy here: this wrap policy leaves the server to its client's entry") ||
		!strings.Contains(got, "MCPSANDBOX_HOSTILE_SERVER") || strings.Contains(got, "mcpsandbox harness --policy") {
		t.Errorf("an init --wrap policy: %q", got)
	}
}

// explain gives the bounds on what reaches serve as one line counting them by boundary and
// naming --bounds, which lists each with what happens past it (trial35 F13: 75 lines of HTTP,
// stdio and audit bounds after the threats, for a stdio setup). Catches explain-bounds-listed.
func TestExplainBoundsOnRequest(t *testing.T) {
	bs := []verify.Bound{{Boundary: "calls", What: "a", Value: "1", Past: "p"}, {Boundary: "stdio, http", What: "b", Value: "2", Past: "q"},
		{Boundary: "http", What: "c", Value: "3", Past: "r"}, {Boundary: "http", What: "d", Value: "4", Past: "s"}}
	var b bytes.Buffer
	writeBounds(&b, bs, false, "--policy p.toml")
	if got := b.String(); got != "\n4 bounds on what reaches serve (calls 1, stdio/http 1, http 2), listed with what happens past each by: mcpsandbox explain --policy p.toml --bounds\n" {
		t.Errorf("without --bounds: %q", got)
	}
	b.Reset()
	writeBounds(&b, bs, true, "--policy p.toml")
	if got := b.String(); strings.Count(got, "past it:") != 4 || !strings.Contains(got, "http    d: 4 (fixed)") {
		t.Errorf("--bounds: %q", got)
	}
}
