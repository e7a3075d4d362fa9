package egress

import (
	"encoding/json"
	"fmt"
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
// (add "example.com" to allow it)"). It is built from serve's own fields only: the host when it
// is plain (PlainHost; else quoted, as a host that is not a name), the port, the rule and serve's
// sentence for it, never the refusal's Reason, which may quote what the program sent (a TLS
// server name, a Host header, a request line): inside serve's bracketed note such text read as
// serve's word (atk41 F17; the host alone was checked, atk35b F4). The audit keeps the Reason.
func (d Decision) Note() string {
	if mutated("egress-note-serve-fields-only") {
		if r, ok := strings.CutPrefix(d.Reason, "mcpsandbox: "); ok {
			return r
		}
		return "egress to " + hostPort(d.Host, d.Port) + " denied (" + d.Rule + "): " + d.Reason
	}
	switch {
	case d.Host == "":
	case !PlainHost(d.Host) && !mutated("egress-note-host-raw"):
		return fmt.Sprintf("egress to %s denied (%s): not a plain DNS name or IP address", strconv.QuoteToASCII(clip(d.Host, MaxLogHost)), d.Rule)
	}
	target := "?"
	if d.Host != "" {
		target = hostPort(d.Host, d.Port)
	}
	if d.sentence != "" {
		return "egress to " + target + " denied: " + d.sentence
	}
	s, ok := ruleSentences[d.Rule]
	if !ok {
		s = "refused (serve's audit log has the details)"
	}
	verb := "denied"
	if d.Rule == RuleUpstream {
		verb = "failed"
	}
	return "egress to " + target + " " + verb + " (" + d.Rule + "): " + s
}

// ruleSentences are serve's words for each check's refusal in a call's note (Note): fixed, so no
// text the program sent reaches the result through them; the audit has the particulars.
var ruleSentences = map[string]string{
	RuleDeniedAddr: "it resolves only to addresses never reached (cloud metadata, loopback, private ranges, this host's own)",
	RuleSNI:        "the TLS server name is absent or is not the CONNECT host (domain fronting); the name checked must be the name used",
	RuleNotTLS:     "the CONNECT tunnel did not carry TLS (send http:// URLs through the proxy instead, HTTP_PROXY)",
	RuleHostHeader: "the request's Host header is not the URL's host, or is not exactly one",
	RuleBadRequest: "not a proxy request the proxy could read",
	RuleLimit:      "past a bound of the proxy (connections, wildcard names, the request head's size or time)",
	RuleUpstream:   "the host is listed, but resolving or connecting to it failed (serve's log says why)",
}

// PlainHost says whether h is a plain host name or address: ASCII letters, digits, '.', '-', '_'
// and ':' (an IPv6 address), at most 253 bytes. Anything else is the sandboxed program's text
// that could read as a line of serve's own (U+2028, no-break spaces and fullwidth punctuation
// pass the URL parser: atk35b F4).
func PlainHost(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '_', c == ':':
		default:
			return false
		}
	}
	return true
}
