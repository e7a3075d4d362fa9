package harness

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

const toyFile = "internal/schemes/toy/scenarios.toml"

// A scheme's overrides are checked by the scenario files' rules, each error naming the file and
// the scenario's key.
func TestOfferErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"unknown id", "[nope]\nskip = \"x\"\n", "[nope]: no scenario has this id"},
		{"not taken", "[wrap-daemon]\nskip = \"x\"\n", "[wrap-daemon]: the scenario needs relay, which the toy scheme does not offer"},
		{"empty", "[dns-exfil]\n", "[dns-exfil]: give steps, detectors or skip"},
		{"unknown detector", "[dns-exfil]\ndetectors = [\"telepathy\"]\n", `[dns-exfil] detector "telepathy" is unknown`},
		{"unknown key", "[dns-exfil]\ncolour = 1\n", `unknown key "dns-exfil.colour"`},
		{"two kinds", "[[dns-exfil.steps]]\nargv = [\"a\"]\nshell = \"b\"\n", "[dns-exfil].steps[0]: give exactly one of"},
		{"placeholder", "[[dns-exfil.steps]]\nshell = \"cat {{nonce}}\"\n", "placeholder {{nonce}} is unknown"},
		{"marker", "[[dns-exfil.steps]]\nshell = \"echo {{marker}}\"\n", "[dns-exfil] steps may not spell out {{marker}}"},
		{"session without the need", "[[dns-exfil.steps]]\nsession = \"a\"\nshell = \"x\"\n", `need needs = [..., "sessions"]`},
		{"toml syntax", "[dns-exfil\n", toyFile + ": "},
	} {
		err := NewOffer("toy", []string{NeedCommands}, toyFile, []byte(c.text)).Err()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), toyFile) {
			t.Errorf("%s: err = %v, want it to name %s and mention %q", c.name, err, toyFile, c.want)
		}
	}
	if err := NewOffer("toy", []string{NeedCommands, "gpu"}, toyFile, nil).Err(); err == nil || !strings.Contains(err.Error(), `offers "gpu", which is no need`) {
		t.Errorf("an unknown concept offered: %v", err)
	}
}

// A scenario applies iff the scheme offers all it needs; the scheme's own steps, detectors and
// skip replace the neutral ones; a scenario without neutral steps needs the scheme's own.
func TestOfferApplies(t *testing.T) {
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Scenario{}
	for _, s := range all {
		byID[s.ID] = s
	}
	text := "[extra-tool-arguments]\nskip = \"no argument list\"\n[dns-exfil]\ndetectors = [\"leak\"]\n[[dns-exfil.steps]]\nshell = \"true\"\n"
	o := NewOffer("toy", []string{NeedCommands}, toyFile, []byte(text))
	if err := o.Complete(all); err != nil {
		t.Fatal(err)
	}
	if steps, why := byID["dns-exfil"].StepsFor(o); why != "" || len(steps) != 1 || steps[0].Shell != "true" {
		t.Errorf("own steps: %v %q", steps, why)
	}
	if ds := byID["dns-exfil"].DetectorsFor(o); !slices.Equal(ds, []string{"leak"}) {
		t.Errorf("own detectors: %v", ds)
	}
	if ds := withDetector(byID["dns-exfil"], "tcp").DetectorsFor(o); !slices.Equal(ds, []string{"leak", "tcp"}) {
		t.Errorf("a control's detector beside the scheme's own: %v", ds)
	}
	if _, why := byID["extra-tool-arguments"].StepsFor(o); why != "no argument list" {
		t.Errorf("skip: %q", why)
	}
	if steps, why := byID["reverse-shell"].StepsFor(o); why != "" || len(steps) == 0 || &steps[0] != &byID["reverse-shell"].Steps[0] {
		t.Errorf("neutral steps: %v %q", steps, why)
	}
	for _, id := range []string{"wrap-daemon", "egress-listed-host", "files-special"} {
		if o.Applies(byID[id]) {
			t.Errorf("%s (needs %v) applies to a scheme offering only commands", id, byID[id].Needs)
		}
		if _, why := byID[id].StepsFor(o); !strings.HasPrefix(why, "does not apply to the toy scheme: it needs ") {
			t.Errorf("%s: %q", id, why)
		}
	}
	bare := NewOffer("toy", []string{NeedCommands}, toyFile, nil)
	if err := bare.Complete(all); err == nil || !strings.Contains(err.Error(), "scenario extra-tool-arguments has no neutral steps") {
		t.Errorf("a scheme with no steps for a scenario it takes: %v", err)
	}
}

// A relay scenario's neutral steps are the wrapped server's raw tool calls; others' may not be.
func TestRelayStepsAreToolCalls(t *testing.T) {
	base := "id = \"x\"\ntitle = \"t\"\ncategory = \"network\"\nthreat = \"t\"\ndetectors = [\"tcp\"]\n[[steps]]\ntool = \"connect\"\n"
	if _, err := LoadFS(fstest.MapFS{"x.toml": {Data: []byte("needs = [\"relay\"]\n" + base)}}); err != nil {
		t.Errorf("relay: %v", err)
	}
	if _, err := LoadFS(fstest.MapFS{"x.toml": {Data: []byte("needs = [\"commands\"]\n" + base)}}); err == nil || !strings.Contains(err.Error(), "scenarios.toml") {
		t.Errorf("commands: %v", err)
	}
}

type brokenOffer struct{ noSessions }

func (brokenOffer) Offer() *Offer {
	return NewOffer("toy", []string{NeedCommands}, toyFile, []byte("[nope]\nskip = \"x\"\n"))
}

// Run refuses a scheme whose overrides do not check, and one with no steps for a scenario it
// takes, before any serve starts.
func TestRunChecksTheOffer(t *testing.T) {
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Binary: "/nonexistent/mcpsandbox", Policy: policy.Default(alsec.Name), Adapter: brokenOffer{}}
	if _, err := Run(context.Background(), all[:1], o); err == nil || !strings.Contains(err.Error(), "[nope]") {
		t.Errorf("broken overrides: %v", err)
	}
	scs, err := Select(all, []string{"extra-tool-arguments"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Adapter = noSessions{}
	if _, err := Run(context.Background(), scs, o); err == nil || !strings.Contains(err.Error(), "has no neutral steps") {
		t.Errorf("no steps for a scenario: %v", err)
	}
}

// The README's scenario format lists every need of the vocabulary.
func TestReadmeListsConcepts(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ConceptNames() {
		if !strings.Contains(strings.ReplaceAll(string(b), "\n", " "), "`"+n+"` (") {
			t.Errorf("README.md does not describe the need %s", n)
		}
	}
}
