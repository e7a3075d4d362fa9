package egress

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
)

// Audit entry values for egress decisions: the tool is "egress", the decision "allowed" or
// "denied", the rule the one that decided, the arguments what was asked for.
const (
	AuditTool    = "egress"
	AuditAllowed = "allowed"
	AuditDenied  = "denied"
	// AuditSummary is the decision of a summary line (rule RuleLogRate): decisions past the
	// proxy's log rate, counted in its arguments (suppressed, denied, allowed).
	AuditSummary = "summary"
)

// Entry renders the decision as an audit log line.
func (d Decision) Entry(server, session, policyHash string) audit.Entry {
	clipDecision(&d) // a Decision built outside the proxy is bounded too
	if !mutated("egress-audit-names-raw") {
		showDecision(&d)
		clipDecision(&d) // an escaped name is longer
	}
	a := map[string]any{
		"method": d.Method, "host": d.Host, "port": d.Port, "addr": d.Addr, "client": d.Client,
		"bytes_out": d.BytesOut, "bytes_in": d.BytesIn,
	}
	if d.Call != "" && !mutated("egress-call-unnamed") {
		a["call"] = d.Call
	}
	if d.DuringCall != "" {
		a["during_call"] = d.DuringCall
	}
	dec := AuditDenied
	switch {
	case d.Rule == RuleLogRate:
		dec = AuditSummary
		a = map[string]any{"suppressed": d.Suppressed, "denied": d.SuppressedDenied, "allowed": d.SuppressedAllowed, "first_host": d.Host}
	case d.Allowed:
		dec = AuditAllowed
	}
	args, _ := json.Marshal(a) // plain data: cannot fail
	return audit.Entry{
		Time:   d.Time.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"),
		Server: server, Session: session, Tool: AuditTool, Arguments: args,
		Decision: dec, Rule: d.Rule, Reason: d.Reason, DurationMS: d.Duration.Milliseconds(), PolicyHash: policyHash,
	}
}

// showDecision makes the fields a sandbox chose visible text, as the audit shows workspace
// paths (visible.Name, atk38b F6): a host holding U+202E would otherwise be printed reordered
// by jq -r or a terminal (atk39 F8). The reason quotes names with %q, but the host may also
// appear in it as given: that mention takes the host's shown form, and any other rune that is
// not printable is shown as its escape.
func showDecision(d *Decision) {
	if h := shownName(d.Host); h != d.Host {
		d.Reason = strings.ReplaceAll(d.Reason, d.Host, h)
		d.Host = h
	}
	d.Reason = visible.Line(d.Reason)
	d.Method = shownName(d.Method)
	d.Client = shownName(d.Client)
	d.Call = shownName(d.Call)
	d.DuringCall = shownName(d.DuringCall)
	d.Addr = shownName(d.Addr)
}

// shownName is visible.Name, and "" for none (Name quotes an empty name).
func shownName(s string) string {
	if s == "" {
		return s
	}
	return visible.Name(s)
}

// String is the decision in one line, for logs.
func (d Decision) String() string {
	if d.Rule == RuleLogRate {
		return d.Reason
	}
	s := d.Method + " " + hostPort(d.Host, d.Port) + " "
	if d.Allowed {
		return s + "allowed by " + strconv.Quote(d.Rule)
	}
	return s + "denied (" + d.Rule + "): " + d.Reason
}

// Note is a refusal in one line for the call's result: what was refused, by which rule, and how
// to allow it where the rule says ("egress to example.com:443 denied: not in allowlist.network
// (add "example.com" to allow it)").
func (d Decision) Note() string {
	if r, ok := strings.CutPrefix(d.Reason, "mcpsandbox: "); ok {
		return r
	}
	return "egress to " + hostPort(d.Host, d.Port) + " denied (" + d.Rule + "): " + d.Reason
}
