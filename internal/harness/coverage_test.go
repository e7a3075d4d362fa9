package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/threat-coverage.md maps every case of the public sandbox-escape suites to the scenarios
// that replay it, with the verdicts the harness measured. This test keeps the table honest:
// every scenario it names exists and applies to the schemes it reports on, every row has
// scenarios or says why not, every scenario appears in some row, and every verdict cell is
// exactly what the stored harness report (docs/threat-coverage/*.json) says for those
// scenarios. After adding a scenario or re-measuring:
//
//	mcpsandbox harness --default --json > docs/threat-coverage/allowlist-default.json
//	mcpsandbox harness --policy P --max-timeout 3s --json > docs/threat-coverage/allowlist-interpreters.json
//	mcpsandbox harness --policy docs/threat-coverage/docker-hosts.policy.toml --max-timeout 3s --json > docs/threat-coverage/docker-hosts.json
//	mcpsandbox harness --policy docs/threat-coverage/docker-session.policy.toml --max-timeout 10s --parallel 2 --json > docs/threat-coverage/docker-session.json
//	mcpsandbox harness --policy docs/threat-coverage/allowlist-hosts.policy.toml --max-timeout 3s --json > docs/threat-coverage/allowlist-hosts.json
//	mcpsandbox harness --policy docs/threat-coverage/wrap-hostile.policy.toml --max-timeout 3s --json > docs/threat-coverage/wrap-hostile.json
//	MCPSANDBOX_UPDATE_COVERAGE=1 go test ./internal/harness -run TestThreatCoverage
//
// (P: the built-in policy plus python3 and sh, as the negative controls run it; the *-hosts
// policies are the same with a network host list, where the egress-* scenarios apply.)

const (
	coverageDoc     = "../../docs/threat-coverage.md"
	coverageReports = "../../docs/threat-coverage"
	coverageFinds   = "../../docs/findings"
	coverageBegin   = "<!-- coverage:begin -->"
	coverageEnd     = "<!-- coverage:end -->"
)

// coverageColumns are the verdict columns, after Suite, Case and Scenarios; Notes follows.
var coverageColumns = []struct {
	header, scheme, report, unmeasured string
}{
	{"allowlist --default", "allowlist", "allowlist-default.json", ""},
	{"allowlist + python3, sh", "allowlist", "allowlist-interpreters.json", ""},
	{"allowlist + python3, sh, network = [hosts]", "allowlist", "allowlist-hosts.json", ""},
	{"docker (mcpsandbox-test:bookworm)", "docker", "docker.json", "not measured: docker scheme not on main yet"},
	{"docker, network = [hosts]", "docker", "docker-hosts.json", "not measured"},
	{"docker, reuse = session", "docker", "docker-session.json", "not measured"},
	{"e2b --default (local E2B server)", "e2b", "e2b.json", "not measured: e2b scheme not on main yet"},
	{"wrap: the hostile test server", "wrap", "wrap-hostile.json", "not measured"},
}

var backticked = regexp.MustCompile("^`([a-z0-9-]+)`$")

type coverageRow struct {
	line              int
	suite, cases, ids string
	verdicts          []string
	notes             string
	scenarios         []string // parsed ids
	na, finding       string
}

func splitRow(l string) []string {
	l = strings.TrimSpace(l)
	l = strings.TrimPrefix(l, "|")
	l = strings.TrimSuffix(l, "|")
	cells := strings.Split(l, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func joinRow(cells []string) string { return "| " + strings.Join(cells, " | ") + " |" }

// verdictFor aggregates the stored outcomes of a row's scenarios into one cell.
func verdictFor(out map[string]Outcome, ids []string) (string, error) {
	var breach, errs, na, contained []string
	for _, id := range ids {
		o, ok := out[id]
		if !ok {
			return "", fmt.Errorf("scenario %s is not in the stored report: re-measure (see the comment atop coverage_test.go)", id)
		}
		switch o {
		case Breach:
			breach = append(breach, id)
		case Error:
			errs = append(errs, id)
		case NotApplicable:
			na = append(na, id)
		case Contained:
			contained = append(contained, id)
		}
	}
	switch {
	case len(breach) > 0:
		return "BREACH: " + strings.Join(breach, ", "), nil
	case len(errs) > 0:
		return "ERROR: " + strings.Join(errs, ", "), nil
	case len(contained) == 0:
		return "N/A", nil
	case len(na) > 0:
		return fmt.Sprintf("CONTAINED %d/%d (%d N/A)", len(contained), len(ids), len(na)), nil
	}
	return "CONTAINED", nil
}

func TestThreatCoverage(t *testing.T) {
	b, err := os.ReadFile(coverageDoc)
	if err != nil {
		t.Fatalf("the coverage table: %v", err)
	}
	all, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*Scenario{}
	for _, s := range all {
		byID[s.ID] = s
	}
	// The stored reports, one per measured column.
	outcomes := make([]map[string]Outcome, len(coverageColumns))
	for i, c := range coverageColumns {
		rb, err := os.ReadFile(filepath.Join(coverageReports, c.report))
		if errors.Is(err, fs.ErrNotExist) && c.unmeasured != "" {
			continue
		}
		if err != nil {
			t.Fatalf("column %q: %v", c.header, err)
		}
		var rep Report
		if err := json.Unmarshal(rb, &rep); err != nil {
			t.Fatalf("column %q: %s: %v", c.header, c.report, err)
		}
		if rep.Scheme != c.scheme {
			t.Fatalf("column %q: %s is a %s report", c.header, c.report, rep.Scheme)
		}
		outcomes[i] = map[string]Outcome{}
		for _, r := range rep.Results {
			outcomes[i][r.ID] = r.Outcome
		}
	}

	lines := strings.Split(string(b), "\n")
	begin, end := slices.Index(lines, coverageBegin), slices.Index(lines, coverageEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s: the table must sit between %s and %s", coverageDoc, coverageBegin, coverageEnd)
	}
	wantHeader := append([]string{"Suite", "Case", "Scenarios"}, nil...)
	for _, c := range coverageColumns {
		wantHeader = append(wantHeader, c.header)
	}
	wantHeader = append(wantHeader, "Notes")
	width := len(wantHeader)
	var rows []coverageRow
	seenHeader := false
	for i := begin + 1; i < end; i++ {
		l := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(l, "|") {
			continue
		}
		cells := splitRow(l)
		if !seenHeader {
			if !slices.Equal(cells, wantHeader) {
				t.Fatalf("%s:%d: header %q, want %q", coverageDoc, i+1, cells, wantHeader)
			}
			seenHeader = true
			continue
		}
		if strings.Trim(strings.Join(cells, ""), "-: ") == "" {
			continue // the separator row
		}
		if len(cells) != width {
			t.Errorf("%s:%d: %d cells, want %d (a '|' inside a cell?)", coverageDoc, i+1, len(cells), width)
			continue
		}
		r := coverageRow{line: i + 1, suite: cells[0], cases: cells[1], ids: cells[2], verdicts: cells[3 : width-1], notes: cells[width-1]}
		switch {
		case strings.HasPrefix(r.ids, "n/a:"):
			r.na = strings.TrimSpace(strings.TrimPrefix(r.ids, "n/a:"))
			if len(r.na) < 20 {
				t.Errorf("%s:%d: %q: say why it does not apply", coverageDoc, r.line, r.ids)
			}
		case strings.HasPrefix(r.ids, "finding:"):
			r.finding = strings.Trim(strings.TrimSpace(strings.TrimPrefix(r.ids, "finding:")), "`")
			fb, err := os.ReadFile(filepath.Join("..", "..", r.finding))
			if err != nil || !strings.HasPrefix(r.finding, "docs/findings/") {
				t.Errorf("%s:%d: finding %q: want an existing docs/findings/ID.toml (%v)", coverageDoc, r.line, r.finding, err)
			} else if _, err := parseScenario(filepath.Base(r.finding), fb); err != nil {
				t.Errorf("%s:%d: finding %s does not load as a scenario: %v", coverageDoc, r.line, r.finding, err)
			}
		default:
			for _, f := range strings.Split(r.ids, ",") {
				m := backticked.FindStringSubmatch(strings.TrimSpace(f))
				if m == nil {
					t.Errorf("%s:%d: scenarios cell %q: want `id`, `id`… or n/a: reason or finding: docs/findings/ID.toml", coverageDoc, r.line, r.ids)
					break
				}
				if byID[m[1]] == nil {
					t.Errorf("%s:%d: scenario %q does not exist in internal/scenarios/", coverageDoc, r.line, m[1])
				}
				r.scenarios = append(r.scenarios, m[1])
			}
		}
		if r.suite == "" || r.cases == "" {
			t.Errorf("%s:%d: suite and case are required", coverageDoc, r.line)
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no rows", coverageDoc)
	}

	update := os.Getenv("MCPSANDBOX_UPDATE_COVERAGE") != ""
	named := map[string]bool{}
	for _, r := range rows {
		for _, id := range r.scenarios {
			named[id] = true
		}
		for ci, c := range coverageColumns {
			got := r.verdicts[ci]
			var want string
			switch {
			case r.na != "":
				want = "—"
			case r.finding != "":
				if got == "" {
					t.Errorf("%s:%d: a finding's %s cell needs the measured result", coverageDoc, r.line, c.header)
				}
				continue
			case outcomes[ci] == nil:
				want = c.unmeasured
			default:
				for _, id := range r.scenarios {
					if s := byID[id]; s != nil && !OfferOf(t, c.scheme).Applies(s) {
						if o, ok := outcomes[ci][id]; ok && o != NotApplicable {
							t.Errorf("%s:%d: %s: the stored report has %s %s, but it does not apply to the %s scheme: re-measure", coverageDoc, r.line, c.header, id, o, c.scheme)
						}
					}
				}
				if want, err = verdictFor(outcomes[ci], r.scenarios); err != nil {
					t.Errorf("%s:%d: %s: %v", coverageDoc, r.line, c.header, err)
					continue
				}
			}
			if got != want {
				if update {
					r.verdicts[ci] = want
					continue
				}
				t.Errorf("%s:%d (%s, %s): %s cell %q, the stored report says %q (MCPSANDBOX_UPDATE_COVERAGE=1 rewrites it)", coverageDoc, r.line, r.suite, r.cases, c.header, got, want)
			}
		}
		if update {
			lines[r.line-1] = joinRow(append(append([]string{r.suite, r.cases, r.ids}, r.verdicts...), r.notes))
		}
	}
	for _, s := range all {
		if !named[s.ID] {
			t.Errorf("%s: scenario %s is in no row: map it to the external case it replays, or to a catalogue row", coverageDoc, s.ID)
		}
	}
	if update && !t.Failed() {
		if err := os.WriteFile(coverageDoc, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the verdict cells of %s", coverageDoc)
	}
}

// The verdict aggregation the table relies on, on its own.
func TestCoverageVerdict(t *testing.T) {
	out := map[string]Outcome{"a": Contained, "b": NotApplicable, "c": Breach, "d": Error, "e": Contained}
	for _, c := range []struct {
		ids  []string
		want string
	}{
		{[]string{"a", "e"}, "CONTAINED"},
		{[]string{"a", "b"}, "CONTAINED 1/2 (1 N/A)"},
		{[]string{"b"}, "N/A"},
		{[]string{"a", "c"}, "BREACH: c"},
		{[]string{"a", "d"}, "ERROR: d"},
	} {
		if got, err := verdictFor(out, c.ids); err != nil || got != c.want {
			t.Errorf("%v: %q, %v; want %q", c.ids, got, err, c.want)
		}
	}
	if _, err := verdictFor(out, []string{"zz"}); err == nil {
		t.Error("a scenario missing from the report must be an error")
	}
}
