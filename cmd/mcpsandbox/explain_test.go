package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"
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

// explain on an e2b policy needs no API key: it explains the policy, with the key's absence as a
// line of its own (trial37 F6: it refused with serve's key error, so no one could read what the
// scheme enforces before opening an account). The same threats as with a key. Red with mutant
// explain-refuses-unmet.
func TestExplainE2BWithoutTheKey(t *testing.T) {
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).Reuse = "session"
	file := writePolicy(t, p)
	t.Setenv("E2B_API_KEY", "e2b_0123456789abcdef0123456789abcdef01234567")
	withKey, errOut, err := runCLI("explain", "--policy", file)
	if err != nil {
		t.Fatalf("explain with a key: %v\n%s", err, errOut)
	}
	t.Setenv("E2B_API_KEY", "")
	out, errOut, err := runCLI("explain", "--policy", file)
	if err != nil {
		t.Fatalf("explain without the key: %v, want the explanation\n%s%s", err, out, errOut)
	}
	const note = "Note: serve will not start here until $E2B_API_KEY is set (what follows does not need it): the E2B API key variable $E2B_API_KEY is empty or unset: export E2B_API_KEY="
	head, rest, ok := strings.Cut(out, note)
	if !ok || strings.Contains(withKey, "serve will not start") {
		t.Fatalf("the key's line, without the key only:\n%s\nwith a key:\n%s", out, withKey)
	}
	_, rest, _ = strings.Cut(rest, "\n\n")
	if head+rest != withKey {
		t.Errorf("without the key, other verdicts than with one:\n%s\nwith a key:\n%s", out, withKey)
	}
	js, _, err := runCLI("explain", "--policy", file, "--json")
	if err != nil || !strings.Contains(js, `"until": "$E2B_API_KEY is set"`) {
		t.Errorf("explain --json without the key: %v\n%s", err, js)
	}
}

// explain on a policy written for another user (its workspace and audit log in their home, which
// this user cannot reach) says so and how to make one's own, not serve's "permission denied …
// create it: mkdir -p" in their home (trial38 F1). Red with mutant explain-foreign-policy.
func TestExplainSaysAPolicyWasWrittenForAnotherUser(t *testing.T) {
	lead := filepath.Join(t.TempDir(), "lead")
	p := policy.Default("allowlist")
	alsec.Of(p).Workspace = filepath.Join(lead, "proj")
	p.Audit.Path = filepath.Join(lead, "audit.jsonl")
	alsec.Of(p).Commands = []policy.Command{{Name: "wc", Path: "/usr/bin/wc", SHA256: strings.Repeat("0", 64)}}
	file := writePolicy(t, p)
	old := policy.Unreachable
	t.Cleanup(func() { policy.Unreachable = old })
	policy.Unreachable = func(p string) string {
		if strings.HasPrefix(p, lead+"/") {
			return lead + " (owner uid 1000, mode -rwx------)"
		}
		return ""
	}
	out, errOut, err := runCLI("explain", "--policy", file)
	if err == nil || !strings.Contains(err.Error(), "written for another user or machine") || !strings.Contains(err.Error(), filepath.Join(lead, "proj")) ||
		!strings.Contains(err.Error(), "audit.path") || !strings.Contains(err.Error(), "mcpsandbox init") || strings.Contains(err.Error()+errOut, "mkdir") {
		t.Fatalf("explain on another user's policy: %v\n%s%s", err, out, errOut)
	}
}
