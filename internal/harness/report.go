package harness

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
)

// TableOptions shape the human report.
type TableOptions struct {
	Color   bool // ANSI colours (a terminal, and NO_COLOR unset)
	Verbose bool // every detector's detail, not only the breaching ones
}

func paint(on bool, code, s string) string {
	if !on {
		return s
	}
	// Every code is written 4 bytes long ("32" as "0;32", "2" as "00;2"), so each painted cell
	// carries the same 11 invisible bytes: tabwriter counts bytes, and cells of one column
	// (the header painted plain, "00;0") then line up on screen (trial30 F17).
	if n := 4 - len(code); n > 0 {
		code = strings.Repeat("0", n-1) + ";" + code
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

var outcomeColour = map[Outcome]string{Contained: "32", Breach: "1;31", Error: "33", NotApplicable: "2"}

// WriteTable prints the human report: one row per scenario, the evidence under each breach or
// error, and the summary line. Scenarios that do not apply to the policy (N/A, most of them for
// a narrow allowlist) are one count line, each listed with its reason only with Verbose.
func WriteTable(w io.Writer, rep *Report, o TableOptions) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CATEGORY\tSCENARIO\t"+paint(o.Color, "0", "OUTCOME")+"\tDETECTORS\tTIME")
	hidden := 0
	for _, r := range rep.Results {
		if r.Outcome == NotApplicable && !o.Verbose {
			hidden++
			continue
		}
		var ds []string
		for _, f := range r.Findings {
			if f.Breach {
				ds = append(ds, f.Detector+"!")
			} else {
				ds = append(ds, f.Detector)
			}
		}
		if r.Outcome == NotApplicable && r.Reason != "" { // an N/A row says why, in its own row
			ds = append(ds, "("+r.Reason+")")
		}
		// Pad before painting: escape codes would confuse the column widths.
		out := fmt.Sprintf("%-14s", r.Outcome)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1fs\n", r.Category, r.ID, paint(o.Color, outcomeColour[r.Outcome], out),
			strings.Join(ds, ","), float64(r.DurationMS)/1000)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if hidden > 0 {
		fmt.Fprintf(w, "(%d scenarios not applicable to this policy are not listed: -v lists each with its reason)\n", hidden)
	}
	for _, r := range rep.Results {
		var lines []string
		for _, f := range r.Findings {
			if f.Breach || o.Verbose {
				lines = append(lines, fmt.Sprintf("    %s: %s", f.Detector, f.Detail))
			}
		}
		if r.Outcome == Error || (o.Verbose && r.Reason != "") {
			lines = append(lines, "    "+r.Reason)
		}
		if o.Verbose {
			for _, s := range r.Started {
				lines = append(lines, "    started: "+s)
			}
		}
		if o.Verbose {
			for _, s := range r.Workspace {
				lines = append(lines, "    workspace commit refused: "+s)
			}
		}
		if len(lines) > 0 {
			fmt.Fprintf(w, "\n%s %s (%s)\n%s\n", paint(o.Color, outcomeColour[r.Outcome], string(r.Outcome)), r.ID, r.Title, strings.Join(lines, "\n"))
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", rep.Summary())
	return err
}

// WriteJSON prints the report as one JSON document.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit prints the report as JUnit XML: a breach is a failure, an error an error, n/a skipped.
func WriteJUnit(w io.Writer, rep *Report) error {
	s := junitSuite{Name: "mcpsandbox harness (" + rep.Scheme + ")", Tests: len(rep.Results),
		Failures: rep.Counts.Breached, Errors: rep.Counts.Errors, Skipped: rep.Counts.NotApplicable,
		Time: float64(rep.ElapsedMS) / 1000}
	for _, r := range rep.Results {
		c := junitCase{Name: r.ID, Classname: "harness." + r.Category, Time: float64(r.DurationMS) / 1000}
		var ev []string
		for _, f := range r.Findings {
			ev = append(ev, fmt.Sprintf("%s breach=%v: %s", f.Detector, f.Breach, f.Detail))
		}
		switch r.Outcome {
		case Breach:
			c.Failure = &junitMessage{Message: "BREACH: " + strings.Join(r.Breached(), ", "), Text: strings.Join(ev, "\n")}
		case Error:
			c.Error = &junitMessage{Message: r.Reason, Text: strings.Join(ev, "\n")}
		case NotApplicable:
			c.Skipped = &junitMessage{Message: r.Reason}
		}
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteControls prints the negative controls' table; the returned error names every silent detector.
func WriteControls(w io.Writer, rs []ControlResult, color bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DETECTOR\tCONTROL\tSCENARIO\t"+paint(color, "0", "FIRED")+"\tEVIDENCE")
	var silent, testBuild []string
	for _, r := range rs {
		mark := paint(color, "32", "yes")
		switch {
		case r.Fired:
		case r.Outcome == NotApplicable && r.Detail == testhooks.NeedsTestBuild:
			// a stand-in control in a release build: it cannot run here, and says so
			mark = paint(color, "2", "n/a")
			testBuild = append(testBuild, r.Detector+" ("+r.Scenario+")")
		default:
			mark = paint(color, "1;31", "NO ")
			silent = append(silent, r.Detector+" ("+r.Scenario+")")
		}
		fmt.Fprintf(tw, "%s\t%s: %s\t%s\t%s\t%s\n", r.Detector, r.Kind, r.Weakness, r.Scenario, mark, r.Detail)
	}
	tw.Flush()
	ran := len(rs) - len(testBuild)
	if len(silent) > 0 {
		fmt.Fprintf(w, "\n%d of %d controls fired; silent: %s\n", ran-len(silent), ran, strings.Join(silent, ", "))
		return fmt.Errorf("detector(s) stayed silent under their negative control: %s", strings.Join(silent, ", "))
	}
	if len(testBuild) > 0 {
		_, err := fmt.Fprintf(w, "\nall %d controls this build can run fired; %d n/a (%s): %s\n", ran, len(testBuild), testhooks.NeedsTestBuild, strings.Join(testBuild, ", "))
		return err
	}
	_, err := fmt.Fprintf(w, "\nall %d controls fired: every detector can report a breach\n", len(rs))
	return err
}
