package schemes

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
)

// scenarioPairs pins which scenarios apply to which scheme (a scenario applies iff the scheme
// offers everything it needs): every scenario not listed here applies to exactly
// commandSchemes. A slip in the vocabulary (a need given to the wrong scenario, a concept
// offered by one scheme too many) changes a pair, and this test names it.
var (
	commandSchemes = []string{"allowlist", "docker", "e2b"}
	scenarioPairs  = map[string][]string{
		// need host-egress: serve's proxy on this host, with a host list
		"egress-bypass-direct":   {"allowlist", "docker"},
		"egress-dns-exfil":       {"allowlist", "docker"},
		"egress-domain-fronting": {"allowlist", "docker"},
		"egress-host-header":     {"allowlist", "docker"},
		"egress-ip-literal":      {"allowlist", "docker"},
		"egress-listed-host":     {"allowlist", "docker"},
		"egress-non-http":        {"allowlist", "docker"},
		"egress-rebind-loopback": {"allowlist", "docker"},
		"egress-unlisted-host":   {"allowlist", "docker"},
		// need host-workspace: serve's file tools on this host
		"files-read-outside":   {"allowlist", "docker"},
		"files-special":        {"allowlist", "docker"},
		"files-write-git-hook": {"allowlist", "docker"},
		"files-write-outside":  {"allowlist", "docker"},
		// need local-sandbox: a listener on this host's loopback
		"listen-loopback-port": {"allowlist", "docker"},
		// need host-binaries: the host's own binaries under serve's argument check
		"git-config-option-spellings": {"allowlist"},
		"git-config-symlink-dotdot":   {"allowlist"},
		"git-dir-symlinked":           {"allowlist"},
		"planted-script-interpreter":  {"allowlist"},
		"loader-exec":                 {"allowlist"},
		"memfd-exec":                  {"allowlist"},
		// need call-cgroup, sessions
		"disguised-survivor":       {"docker"},
		"session-cap":              {"docker"},
		"session-concurrent":       {"docker"},
		"session-processes":        {"docker"},
		"session-python-variables": {"docker"},
		"session-serve-killed":     {"docker"},
		"session-tmp-files":        {"docker"},
		// need relay: a wrapped MCP server's tools
		"wrap-connect-out":       {"wrap"},
		"wrap-daemon":            {"wrap"},
		"wrap-dns-exfil":         {"wrap"},
		"wrap-dump-env":          {"wrap"},
		"wrap-fill-disk":         {"wrap"},
		"wrap-fork-bomb":         {"wrap"},
		"wrap-git-hooks":         {"wrap"},
		"wrap-hidden-listener":   {"wrap"},
		"wrap-read-home-secrets": {"wrap"},
		"wrap-read-proc":         {"wrap"},
		"wrap-signal-sibling":    {"wrap"},
		"wrap-write-outside":     {"wrap"},
		"wrap-write-rc":          {"wrap"},
	}
	// scenariosPerScheme are the counts the pairs above make of today's catalogue.
	scenariosPerScheme = map[string]int{"allowlist": 100, "docker": 101, "e2b": 80, "wrap": 13}
)

func TestScenarioPairs(t *testing.T) {
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, s := range all {
		var got []string
		for _, sc := range All {
			if sc.Adapter.Offer().Applies(s) {
				got = append(got, sc.Name)
				count[sc.Name]++
			}
		}
		want, listed := scenarioPairs[s.ID]
		if !listed {
			want = commandSchemes
		}
		if !slices.Equal(got, want) {
			t.Errorf("scenario %s (needs %s) applies to %v, pinned %v", s.ID, strings.Join(s.Needs, ", "), got, want)
		}
	}
	for id := range scenarioPairs {
		if !slices.ContainsFunc(all, func(s *harness.Scenario) bool { return s.ID == id }) {
			t.Errorf("pinned scenario %s does not exist", id)
		}
	}
	for _, sc := range All {
		if count[sc.Name] != scenariosPerScheme[sc.Name] {
			t.Errorf("%s takes %d scenarios, pinned %d", sc.Name, count[sc.Name], scenariosPerScheme[sc.Name])
		}
	}
}

// Every scheme's offer reads and checks (its scenarios.toml), gives steps or a skip for every
// scenario it takes, and offers sessions iff its adapter can watch them (a Sessioner).
func TestOffersCheck(t *testing.T) {
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range All {
		if sc.Adapter == nil {
			t.Errorf("%s: no harness adapter", sc.Name)
			continue
		}
		o := sc.Adapter.Offer()
		if o.Scheme() != sc.Name {
			t.Errorf("%s: its offer names %s", sc.Name, o.Scheme())
		}
		if err := o.Complete(all); err != nil {
			t.Errorf("%s: %v", sc.Name, err)
		}
		_, sessioner := sc.Adapter.(harness.Sessioner)
		if offers := slices.Contains(o.Offers(), harness.NeedSessions); offers != sessioner {
			t.Errorf("%s: offers sessions %v, but a Sessioner adapter %v", sc.Name, offers, sessioner)
		}
	}
}
