// Package harness replays adversarial scenarios against a live `mcpsandbox serve`, spawned over
// stdio exactly as an MCP client spawns it, and decides containment from detectors that watch
// from outside the sandbox: never from what the sandbox says about itself.
package harness

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/internal/scenarios"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Categories a scenario may belong to, in report order.
var Categories = []string{"resource", "network", "filesystem", "privilege", "injection", "hijack", "persistence"}

// Scenario is one adversarial scenario file.
type Scenario struct {
	ID        string   `toml:"id"`
	Title     string   `toml:"title"`
	Category  string   `toml:"category"`
	Threat    string   `toml:"threat"`    // what an attacker gains if this is not contained
	Needs     []string `toml:"needs"`     // what it needs of a scheme (Concepts): it applies where all are offered
	Detectors []string `toml:"detectors"` // which detectors decide
	// Exclusive scenarios run alone: they load the host (fork bombs share the uid's process
	// limit with every other call, memory bombs the RAM) and would disturb their neighbours.
	Exclusive bool    `toml:"exclusive"`
	Setup     []Setup `toml:"setup"`
	Steps     []Step  `toml:"steps"`
	// ReturnWithin bounds every call of this scenario more tightly than the policy's timeout
	// (a grandchild holding stdout must not keep the call open).
	ReturnWithin policy.Duration `toml:"return_within"`
	// Evidence are strings besides the marker whose appearance in output means a payload ran
	// (what a preloaded library prints, say).
	Evidence []string `toml:"evidence"`
	// NeedsHostList (needs "host-egress"): the scenario tests network by name; it applies only
	// when the run's policy has a network host list (n/a otherwise), which the harness extends
	// with its stand-ins.
	NeedsHostList bool `toml:"-"`
	// NeedsSessions (needs "sessions"): the scenario attacks the isolation between MCP sessions
	// of one serve; it applies only when the run's policy keeps a sandbox per session (n/a
	// otherwise).
	NeedsSessions bool   `toml:"-"`
	File          string `toml:"-"`
	// controlled are detectors a negative control adds to whatever judges the scenario.
	controlled []string
}

// Setup is a file the harness lays in the workspace before the server starts, as a cloned
// repository or an earlier session might have left it.
type Setup struct {
	Path    string      `toml:"path"`    // relative to the workspace
	Content string      `toml:"content"` // file content
	Size    policy.Size `toml:"size"`    // or: a file of this many bytes
	Mode    int64       `toml:"mode"`    // default 0644
	Symlink string      `toml:"symlink"` // or: a symlink to this target
	// Hardlink: or a hard link to this existing host file (a placeholder path such as
	// {{canary}}), made by the host as a package manager hard-links its shared store into
	// node_modules. The link stays owned by the file's owner (the workspace's chown skips it).
	Hardlink string `toml:"hardlink"`
	// FIFO: or a named pipe no one writes to, as a program could leave one for serve's file
	// tools to block on.
	FIFO bool `toml:"fifo"`
}

// Step is one tool call, said in the neutral forms each scheme's adapter translates: argv (an
// allowed program and its arguments), python code, a shell script; or a raw tool call.
type Step struct {
	Argv   []string `toml:"argv"`
	Python string   `toml:"python"`
	Shell  string   `toml:"shell"`
	// Tool and Arguments send a raw tool call (scheme overrides only): for arguments no neutral
	// form has, such as an extra field smuggling an environment.
	Tool      string         `toml:"tool"`
	Arguments map[string]any `toml:"arguments"`
	// Parallel fires this many copies of the call at once.
	Parallel int `toml:"parallel"`
	// KillServerAfter SIGKILLs the server this long after a process of the call is first seen
	// running on the host, as a crash would.
	KillServerAfter policy.Duration `toml:"kill_server_after"`
	// Session names the MCP session of the one serve the call is made in ("a", "b"; sessions.go).
	// Steps naming the same session share it; a step naming none gets a session of its own.
	Session string `toml:"session"`
	// Concurrent: this step runs at the same time as the adjacent steps that say so too.
	Concurrent bool `toml:"concurrent"`
	// FillCap: the step is made in as many fresh sessions as the policy's session cap allows,
	// one after another and each kept open, and then in one more: that one must be refused.
	FillCap bool `toml:"fill_cap"`
	// Start is the step's start token, drawn by the harness for each run (never written in a
	// scenario file): adapters that run the step through an interpreter or a shell print it
	// first (PythonStart, ShellStart), so the harness can tell a step that acted from one a
	// loaded machine timed out before it began. Zero in the adapters' n/a probe.
	Start StartToken `toml:"-"`
}

// StartToken proves a step started. It is two random halves that the step's prelude prints
// joined (A immediately followed by B) while the code handed to the sandbox spells them apart,
// so the joined form can only come back in the call's output streams if the prelude ran: a
// refusal or error that quotes the call's arguments back cannot carry it. It is drawn when the
// run starts, after the scenario was written, so no scenario text (and no earlier step) can
// know it. A token only ever turns a CONTAINED verdict into an ERROR when it is missing; it is
// never consulted when a detector reported a breach, so printing it cannot hide one.
type StartToken struct{ A, B string }

// NewStartToken draws a fresh token.
func NewStartToken() StartToken { return StartToken{A: "MCPSBSTART" + randHex(6), B: randHex(6)} }

// Joined is what the prelude prints, and what the harness looks for in the output streams.
func (t StartToken) Joined() string { return t.A + t.B }

// IsZero reports whether no token was drawn (the n/a probe, or a step kind with none).
func (t StartToken) IsZero() bool { return t.A == "" }

// PythonStart is the line an adapter puts before a python step's code: it prints the start
// token on stderr and flushes, before any statement of the step runs ("" without a token).
// Only hex digits and Python syntax: nothing an argument check could take for a path.
func (s Step) PythonStart() string {
	if s.Start.IsZero() {
		return ""
	}
	return fmt.Sprintf("import sys as _mcpsb_s; _mcpsb_s.stderr.write('%s' '%s' '\\n'); _mcpsb_s.stderr.flush(); del _mcpsb_s\n", s.Start.A, s.Start.B)
}

// ShellStart is the line an adapter puts before a shell step's script (or before the exec of
// an argv step it runs through a shell): printf, a builtin, prints the token on stderr before
// the step's first command ("" without a token).
func (s Step) ShellStart() string {
	if s.Start.IsZero() {
		return ""
	}
	return fmt.Sprintf("printf '%%s%%s\\n' %s %s >&2\n", s.Start.A, s.Start.B)
}

func (s Step) Kind() string {
	switch {
	case len(s.Argv) > 0:
		return "argv"
	case s.Python != "":
		return "python"
	case s.Shell != "":
		return "shell"
	case s.Tool != "":
		return "tool"
	}
	return ""
}

// StepsFor is the steps the offer's scheme runs, or the reason it has nothing to run: the
// scenario needs what the scheme does not offer, or the scheme's scenarios.toml skips it. No
// steps and no reason: the scheme gives none and the scenario has no neutral steps (an error).
func (s *Scenario) StepsFor(o *Offer) ([]Step, string) {
	if miss := o.Missing(s); len(miss) > 0 {
		return nil, fmt.Sprintf("does not apply to the %s scheme: it needs %s, which the scheme does not offer", o.Scheme(), strings.Join(miss, ", "))
	}
	if ov, ok := o.override(s.ID); ok {
		if ov.Skip != "" {
			return nil, ov.Skip
		}
		if len(ov.Steps) > 0 {
			return ov.Steps, ""
		}
	}
	return s.Steps, ""
}

// DetectorsFor is the detectors that judge the scenario under the offer's scheme.
func (s *Scenario) DetectorsFor(o *Offer) []string {
	ds := s.Detectors
	if ov, ok := o.override(s.ID); ok && len(ov.Detectors) > 0 {
		ds = ov.Detectors
	}
	if len(s.controlled) > 0 {
		ds = append(slices.Clone(ds), s.controlled...)
	}
	return ds
}

var (
	idRe          = lazy.Regexp(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	placeholderRe = lazy.Regexp(`\{\{([a-z_]+)\}\}`)
)

// Placeholders scenarios may use; the harness fills them per run. There is deliberately none
// for the nonce or the server's secret: a scenario can only learn them by breaking out.
var Placeholders = map[string]string{
	"ws":            "the workspace (absolute)",
	"root":          "the run's scratch root, parent of the workspace",
	"outside":       "a world-writable directory outside the workspace",
	"canary":        "a world-readable, world-writable canary file outside the workspace",
	"rel_outside":   "the outside directory relative to the workspace (../outside)",
	"home":          "the fake HOME the server runs with (.ssh/id_rsa, .aws/credentials, .bashrc)",
	"rootonly":      "a directory only root may enter, holding a secret",
	"tcp_port":      "loopback TCP listener port",
	"udp_port":      "loopback UDP listener port",
	"dns_port":      "loopback stub DNS resolver port (UDP)",
	"listen_port":   "a loopback TCP port the harness reserved and left free: the listen detector dials it from the host during and after the calls",
	"unix_sock":     "pathname unix socket listener (outside the workspace)",
	"abstract_sock": "abstract unix socket listener name (without the leading NUL)",
	"tag":           "this run's tag: processes carry it, DNS names use it",
	"sibling_pid":   "host pid of a process of the sandbox's uid outside the sandbox, holding the server's secret (the sibling detector watches it)",
	"marker":        "a string a planted payload prints if it ever runs",
	"egress_ip":     "an address outside this host (TEST-NET-2), watched in the host's socket tables",
	"metadata_ip":   "the cloud metadata address 169.254.169.254",
	// network by name (scenarios that need host-egress)
	"egress_allowed_host":         "the allowed stand-in host's name (the run's host list names it)",
	"egress_allowed_http_port":    "the allowed stand-in's HTTP port (listed)",
	"egress_allowed_https_port":   "the allowed stand-in's HTTPS port (listed; self-signed certificate)",
	"egress_forbidden_host":       "the forbidden stand-in host's name (resolvable by serve's proxy, never listed)",
	"egress_forbidden_port":       "the forbidden stand-in's HTTP port",
	"egress_forbidden_https_port": "the forbidden stand-in's HTTPS port",
	"egress_rebind_host":          "a name the run's host list names on {{tcp_port}}, which resolves to 127.0.0.1 (a listed name pointing at loopback)",
	// sessions (scenarios that need sessions)
	"session_secret": "a secret drawn per run: the sessions whose steps spell it own it; it must never come back in another session's output (session_leak), and a process carrying it must outlive the other sessions' calls (session_process)",
}

// Load parses every embedded scenario.
func Load() ([]*Scenario, error) { return LoadFS(scenarios.FS) }

// LoadFS parses every *.toml in fsys, checking each strictly: unknown keys, unknown detectors,
// categories, needs and placeholders are errors naming the file.
func LoadFS(fsys fs.FS) ([]*Scenario, error) {
	names, err := fs.Glob(fsys, "*.toml")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	var errs []error
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		s, err := parseScenario(n, b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		ci, cj := slices.Index(Categories, out[i].Category), slices.Index(Categories, out[j].Category)
		if ci != cj {
			return ci < cj
		}
		return out[i].ID < out[j].ID
	})
	return out, errors.Join(errs...)
}

// parseScenario decodes one scenario file and checks it by concern (header, detectors, steps,
// placeholders, setup), naming every problem found at once.
func parseScenario(name string, b []byte) (*Scenario, error) {
	s := &Scenario{File: name}
	md, err := toml.NewDecoder(bytes.NewReader(b)).Decode(s)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	var pr problems
	for _, k := range md.Undecoded() {
		switch ks := k.String(); {
		case strings.Contains(ks, ".arguments"): // raw tool arguments are free-form by design
		case ks == "schemes" || ks == "scheme" || strings.HasPrefix(ks, "scheme."):
			if !slices.Contains(pr, schemeKeyHint) {
				pr.bad("%s", schemeKeyHint)
			}
		default:
			pr.bad("unknown key %q", ks)
		}
	}
	pr.checkHeader(s, name)
	pr.checkNeeds(s)
	pr.checkDetectors(s)
	pr.checkAllSteps(s)
	pr.checkPlaceholders(s, b)
	pr.checkSetup(s)
	pr.checkSessions(s)
	if len(pr) > 0 {
		return nil, fmt.Errorf("scenario %s: %s", name, strings.Join(pr, "; "))
	}
	return s, nil
}

// schemeKeyHint is what a scenario written for the old format is told.
const schemeKeyHint = "a scenario names no scheme: say what it needs of one (needs = [...], harness.Concepts); " +
	"a scheme's own steps, detectors or skip for it go in that scheme's internal/schemes/NAME/scenarios.toml, keyed by the scenario's id"

// problems collects what is wrong with a scenario file, in the order found.
type problems []string

func (pr *problems) bad(f string, a ...any) { *pr = append(*pr, fmt.Sprintf(f, a...)) }

// checkHeader: the id (and file name), title, threat and category.
func (pr *problems) checkHeader(s *Scenario, name string) {
	if !idRe().MatchString(s.ID) {
		pr.bad("id %q: use lowercase words joined by '-'", s.ID)
	}
	if want := s.ID + ".toml"; path.Base(name) != want {
		pr.bad("file name should be %s (one file per id keeps ids unique)", want)
	}
	if s.Title == "" || s.Threat == "" {
		pr.bad("title and threat are required")
	}
	if !slices.Contains(Categories, s.Category) {
		pr.bad("category %q: use one of %s", s.Category, strings.Join(Categories, ", "))
	}
}

// checkDetectors: at least one, each known.
func (pr *problems) checkDetectors(s *Scenario) {
	if len(s.Detectors) == 0 {
		pr.bad("detectors: name at least one (a scenario nothing watches proves nothing)")
	}
	pr.checkDetectorNames("", s.Detectors)
}

// checkDetectorNames: each detector is known.
func (pr *problems) checkDetectorNames(where string, ds []string) {
	for _, d := range ds {
		if _, ok := detectors[d]; !ok {
			pr.bad("%sdetector %q is unknown: use one of %s", where, d, strings.Join(DetectorNames(), ", "))
		}
	}
}

// checkAllSteps: the neutral steps, where a raw tool call is a wrapped server's (needs relay).
// A scenario without neutral steps is one every scheme expresses in its own scenarios.toml
// (Offer checks that each scheme it applies to does).
func (pr *problems) checkAllSteps(s *Scenario) {
	pr.checkSteps("steps", s.Steps, slices.Contains(s.Needs, NeedRelay))
}

// checkSteps: each step has exactly one form, a raw tool call only where rawTools (a scheme's
// own steps, a relay's), a parallel count in 0..200.
func (pr *problems) checkSteps(where string, steps []Step, rawTools bool) {
	for i, st := range steps {
		n := 0
		for _, set := range []bool{len(st.Argv) > 0, st.Python != "", st.Shell != "", st.Tool != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			pr.bad("%s[%d]: give exactly one of argv, python, shell, tool", where, i)
		}
		if st.Tool != "" && !rawTools {
			pr.bad("%s[%d]: a raw tool call is scheme-specific: put it in the scheme's scenarios.toml (internal/schemes/NAME), or need %s (a wrapped server's tools)", where, i, NeedRelay)
		}
		if st.Parallel < 0 || st.Parallel > 200 {
			pr.bad("%s[%d]: parallel %d is outside 0..200", where, i, st.Parallel)
		}
		if st.Session != "" && !idRe().MatchString(st.Session) {
			pr.bad("%s[%d]: session %q: use lowercase words joined by '-'", where, i, st.Session)
		}
		if st.FillCap && (st.Session == "" || st.Parallel > 1) {
			pr.bad("%s[%d]: fill_cap needs a session name and no parallel copies", where, i)
		}
	}
}

// checkPlaceholders: every placeholder is known, and no step spells out the marker: the marker
// is what a planted payload prints; a step that spelled it out would "find" it in its own
// refusal message.
func (pr *problems) checkPlaceholders(s *Scenario, b []byte) {
	pr.checkPlaceholderText(b)
	pr.checkMarker("", s.Steps)
}

// checkMarker: no step spells out the marker (checkPlaceholders says why).
func (pr *problems) checkMarker(where string, steps []Step) {
	for _, st := range steps {
		if strings.Contains(strings.Join(st.Argv, " ")+st.Python+st.Shell+fmt.Sprint(st.Arguments), "{{marker}}") {
			pr.bad("%ssteps may not spell out {{marker}}: only setup files (planted payloads) may", where)
			return
		}
	}
}

// checkSetup: setup paths stay in the workspace; a hard link is only a link, to a host file
// named by a placeholder.
func (pr *problems) checkSetup(s *Scenario) {
	for i, su := range s.Setup {
		if su.Path == "" || path.IsAbs(su.Path) || strings.Contains(su.Path, "..") {
			pr.bad("setup[%d]: path must be relative to the workspace, without ..", i)
		}
		if su.Hardlink != "" && (su.Symlink != "" || su.Content != "" || su.Size > 0) {
			pr.bad("setup[%d]: a hard link has no content, size or symlink of its own", i)
		}
		if su.FIFO && (su.Symlink != "" || su.Hardlink != "" || su.Content != "" || su.Size > 0) {
			pr.bad("setup[%d]: a fifo has no content, size or link of its own", i)
		}
		if su.Hardlink != "" && !strings.HasPrefix(su.Hardlink, "{{") {
			pr.bad("setup[%d]: hardlink names a host file by a placeholder (e.g. {{canary}})", i)
		}
	}
}

// Select filters scenarios by id or category (either may be given; empty = all).
func Select(all []*Scenario, ids, categories []string) ([]*Scenario, error) {
	for _, c := range categories {
		if !slices.Contains(Categories, c) {
			return nil, fmt.Errorf("category %q is unknown: use one of %s", c, strings.Join(Categories, ", "))
		}
	}
	known := map[string]bool{}
	for _, s := range all {
		known[s.ID] = true
	}
	for _, id := range ids {
		if !known[id] {
			return nil, fmt.Errorf("scenario %q is unknown: `mcpsandbox harness --list` shows them", id)
		}
	}
	var out []*Scenario
	for _, s := range all {
		if (len(ids) == 0 && len(categories) == 0) || slices.Contains(ids, s.ID) || slices.Contains(categories, s.Category) {
			out = append(out, s)
		}
	}
	return out, nil
}
