package harness

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// What a scenario needs of a scheme, in words no scheme owns: a scenario (its `needs`) applies
// to a scheme iff the scheme offers every one of them (its adapter's Offer). Adding a scheme
// means saying what it offers; the scenarios stay as they are.
const (
	NeedCommands      = "commands"
	NeedHostEgress    = "host-egress"
	NeedHostWorkspace = "host-workspace"
	NeedHostBinaries  = "host-binaries"
	NeedLocalSandbox  = "local-sandbox"
	NeedCallCgroup    = "call-cgroup"
	NeedSessions      = "sessions"
	NeedRelay         = "relay"
)

// Concepts is the vocabulary of needs, one line each.
var Concepts = map[string]string{
	NeedCommands:      "the scheme's own tools run a step's argv, python or shell in its sandbox",
	NeedHostEgress:    "serve's egress proxy, on serve's host, lets the sandbox reach the hosts a policy lists by name (and the run's policy lists some: n/a otherwise)",
	NeedHostWorkspace: "serve's file tools (read_file, write_file, list_files) act on a workspace on serve's host, where the detectors look",
	NeedHostBinaries:  "commands run the host's own binaries (git, sort, interpreters), pinned and argument-checked by serve, not an image's: an attack on that check",
	NeedLocalSandbox:  "the sandbox runs on serve's host, not in a remote VM: a listener it opens on loopback could be this host's",
	NeedCallCgroup:    "each call's processes run in a cgroup of their own (a container's) that the harness reads from the host, not serve's",
	NeedSessions:      "a sandbox per MCP session of one serve that the harness watches from the host (a Sessioner adapter; and the run's policy keeps one: n/a otherwise)",
	NeedRelay:         "the scheme relays a wrapped stdio MCP server (the harness's hostile test server): steps are raw calls of that server's tools",
}

// ConceptNames is the vocabulary, sorted.
func ConceptNames() []string {
	var ns []string
	for n := range Concepts {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// checkNeeds: at least one need, each in the vocabulary; the needs that also ask something of
// the run's policy set their flags.
func (pr *problems) checkNeeds(s *Scenario) {
	if len(s.Needs) == 0 {
		pr.bad("needs: say what the scenario needs of a scheme (one or more of %s)", strings.Join(ConceptNames(), ", "))
	}
	for _, n := range s.Needs {
		if _, ok := Concepts[n]; !ok {
			pr.bad("need %q is unknown: use one of %s (harness.Concepts says what each means)", n, strings.Join(ConceptNames(), ", "))
		}
	}
	s.NeedsHostList = slices.Contains(s.Needs, NeedHostEgress)
	s.NeedsSessions = slices.Contains(s.Needs, NeedSessions)
}

// Override is how one scheme's tools express a scenario, from the scheme's own scenarios.toml:
// its own steps, the detectors that judge it there (a probe the scheme's image cannot run is
// judged by the detectors that need no probe), or why the scheme has nothing to attack (skip).
type Override struct {
	Steps     []Step   `toml:"steps"`
	Skip      string   `toml:"skip"`
	Detectors []string `toml:"detectors"`
}

// Offer is a scheme's side of the scenarios: the concepts it offers, and its overrides (a TOML
// file of [SCENARIO-ID] tables, each an Override), read and checked on first use (Err).
type Offer struct {
	scheme string
	offers []string
	file   string
	text   []byte
	once   sync.Once
	over   map[string]Override
	err    error
}

// NewOffer is the offer of the named scheme: the concepts it offers, and the text of its
// overrides file (file names it in errors; text may be empty: no overrides).
func NewOffer(scheme string, offers []string, file string, text []byte) *Offer {
	return &Offer{scheme: scheme, offers: slices.Clone(offers), file: file, text: text}
}

// Scheme is the name of the scheme that makes the offer.
func (o *Offer) Scheme() string { return o.scheme }

// Offers are the concepts the scheme offers.
func (o *Offer) Offers() []string { return slices.Clone(o.offers) }

// Missing is what the scenario needs that the scheme does not offer (none: it applies).
func (o *Offer) Missing(s *Scenario) []string {
	var miss []string
	for _, n := range s.Needs {
		if !slices.Contains(o.offers, n) {
			miss = append(miss, n)
		}
	}
	return miss
}

// Applies reports whether the scheme offers everything the scenario needs.
func (o *Offer) Applies(s *Scenario) bool { return len(o.Missing(s)) == 0 }

// Err reads and checks the offer against the embedded scenarios, once: nil, or every problem,
// naming the file and the scenario's key.
func (o *Offer) Err() error {
	o.once.Do(func() {
		all, err := Load()
		if err != nil {
			o.err = err
			return
		}
		o.over, o.err = o.parse(all)
	})
	return o.err
}

func (o *Offer) override(id string) (Override, bool) {
	if o.Err() != nil {
		return Override{}, false
	}
	ov, ok := o.over[id]
	return ov, ok
}

// parse decodes the overrides and checks them by the scenario files' own rules: each key an
// existing scenario this scheme takes, each override not empty, its detectors known, its steps
// well formed, its placeholders known, its sessions where the scenario needs sessions.
func (o *Offer) parse(all []*Scenario) (map[string]Override, error) {
	var pr problems
	for _, n := range o.offers {
		if _, ok := Concepts[n]; !ok {
			pr.bad("the %s scheme offers %q, which is no need: use %s", o.scheme, n, strings.Join(ConceptNames(), ", "))
		}
	}
	over := map[string]Override{}
	md, err := toml.NewDecoder(bytes.NewReader(o.text)).Decode(&over)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.file, err)
	}
	for _, k := range md.Undecoded() {
		if !strings.Contains(k.String(), ".arguments") {
			pr.bad("unknown key %q", k.String())
		}
	}
	byID := map[string]*Scenario{}
	for _, s := range all {
		byID[s.ID] = s
	}
	ids := make([]string, 0, len(over))
	for id := range over {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		pr.checkOverride(o, byID[id], id, over[id])
	}
	pr.checkPlaceholderText(o.text)
	if len(pr) > 0 {
		return nil, fmt.Errorf("%s: %s", o.file, strings.Join(pr, "; "))
	}
	return over, nil
}

// checkOverride: one [id] table of a scheme's overrides.
func (pr *problems) checkOverride(o *Offer, s *Scenario, id string, ov Override) {
	where := "[" + id + "]"
	switch {
	case s == nil:
		pr.bad("%s: no scenario has this id (scenarios/%s.toml)", where, id)
		return
	case !o.Applies(s):
		pr.bad("%s: the scenario needs %s, which the %s scheme does not offer", where, strings.Join(o.Missing(s), ", "), o.scheme)
	case ov.Skip == "" && len(ov.Steps) == 0 && len(ov.Detectors) == 0:
		pr.bad("%s: give steps, detectors or skip", where)
	}
	pr.checkDetectorNames(where+" ", ov.Detectors)
	pr.checkSteps(where+".steps", ov.Steps, true)
	pr.checkMarker(where+" ", ov.Steps)
	pr.checkSessionUse(where+" ", s.NeedsSessions, ov.Steps, ov.Detectors)
}

// checkPlaceholderText: every placeholder in the text is known.
func (pr *problems) checkPlaceholderText(b []byte) {
	for _, m := range placeholderRe().FindAllStringSubmatch(string(b), -1) {
		if _, ok := Placeholders[m[1]]; !ok {
			pr.bad("placeholder {{%s}} is unknown", m[1])
		}
	}
}

// Complete checks that the scheme has steps (or a reason to skip) for every scenario of all it
// takes: a scenario without neutral steps needs the scheme's own in its scenarios.toml.
func (o *Offer) Complete(all []*Scenario) error {
	if err := o.Err(); err != nil {
		return err
	}
	var errs []error
	for _, s := range all {
		if steps, why := s.StepsFor(o); o.Applies(s) && len(steps) == 0 && why == "" {
			errs = append(errs, fmt.Errorf("%s: scenario %s has no neutral steps: give the %s scheme's own [%s] steps here, or skip", o.file, s.ID, o.scheme, s.ID))
		}
	}
	return errors.Join(errs...)
}
