package egress

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Bounds on what one decision may put in the audit log and on stderr. Every string in a
// Decision that the sandbox controls (the host it asked for, the method, a TLS server name, an
// error quoting its bytes) is clipped to these lengths before the decision is emitted; a clipped
// value keeps its full length and the start of its SHA-256, so two clipped names can still be
// told apart and matched against a full one.
const (
	// MaxLogHost bounds Decision.Host (a DNS name is at most 253 bytes).
	MaxLogHost = 255
	// MaxLogReason bounds Decision.Reason.
	MaxLogReason = 1024
	// maxLogShort bounds the method, client and address fields.
	maxLogShort = 64
	// maxLogRule bounds Decision.Rule (a policy entry or the policy key).
	maxLogRule = 300
	// DefaultLogRate is Options.LogRate's default: decisions a proxy logs one by one per second.
	DefaultLogRate = 20
	// maxSummaryRules bounds the rules a summary counts one by one (the rest are "other").
	maxSummaryRules = 32
)

// clip returns s if it fits in max bytes, else its start (cut at a UTF-8 boundary) followed
// by "…[N bytes, sha256:HEX16]".
func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	tail := fmt.Sprintf("…[%d bytes, sha256:%s]", len(s), hex.EncodeToString(sum[:8]))
	keep := max - len(tail)
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + tail
}

// clipDecision bounds every client-controlled field of d (see MaxLogHost). The host is clipped
// inside the reason too, where refusal sentences quote it.
func clipDecision(d *Decision) {
	if h := clip(d.Host, MaxLogHost); h != d.Host {
		d.Reason = strings.ReplaceAll(d.Reason, d.Host, h)
		d.Host = h
	}
	d.Reason = clip(d.Reason, MaxLogReason)
	d.Method = clip(d.Method, maxLogShort)
	d.Client = clip(d.Client, maxLogShort)
	d.Call = clip(d.Call, maxLogShort)
	d.DuringCall = clip(d.DuringCall, maxLogShort)
	d.Addr = clip(d.Addr, maxLogShort)
	d.Rule = clip(d.Rule, maxLogRule)
}

// RuleLogRate is the rule of a summary decision: decisions past Options.LogRate in a second,
// counted instead of logged one by one.
const RuleLogRate = "log-rate"

// logLimiter lets the first rate decisions of each second through and counts the rest for a
// summary, emitted when the second is over (or at Close), so nothing goes unrecorded.
type logLimiter struct {
	rate     int
	winStart time.Time
	inWin    int
	// suppressed decisions since the last summary
	n, denied, allowed int
	rules              map[string]int
	firstHost          string
	since              time.Time
	timer              *time.Timer
}

// admit says whether d is logged one by one; if not, d is counted. flush is a summary due now
// (the previous second had suppressed decisions), to be emitted before d.
func (l *logLimiter) admit(d *Decision, now time.Time, arm func(time.Duration)) (ok bool, flush *Decision) {
	if now.Sub(l.winStart) >= time.Second || now.Before(l.winStart) {
		flush = l.take(now)
		l.winStart, l.inWin = now, 0
	}
	if l.inWin < l.rate || mutated("egress-log-rate") {
		l.inWin++
		return true, flush
	}
	if l.n == 0 {
		l.since = now
		l.firstHost = d.Host
		if l.timer == nil {
			arm(l.winStart.Add(time.Second).Sub(now))
		}
	}
	l.n++
	if d.Allowed {
		l.allowed++
	} else {
		l.denied++
	}
	if l.rules == nil {
		l.rules = map[string]int{}
	}
	r := d.Rule
	if _, ok := l.rules[r]; !ok && len(l.rules) >= maxSummaryRules {
		r = "other"
	}
	l.rules[r]++
	return false, flush
}

// take returns the summary of the decisions counted so far and starts counting afresh; nil
// when there are none.
func (l *logLimiter) take(now time.Time) *Decision {
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	if l.n == 0 {
		return nil
	}
	type rc struct {
		rule string
		n    int
	}
	var rs []rc
	for r, n := range l.rules {
		rs = append(rs, rc{r, n})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].rule < rs[j].rule })
	var top []string
	for i, r := range rs {
		if i == 3 {
			break
		}
		top = append(top, fmt.Sprintf("%s (%d)", r.rule, r.n))
	}
	d := &Decision{Time: now, Method: "-", Host: l.firstHost, Rule: RuleLogRate,
		Suppressed: l.n, SuppressedDenied: l.denied, SuppressedAllowed: l.allowed, Duration: now.Sub(l.since),
		Reason: fmt.Sprintf("%d egress decisions were not logged one by one (more than %d a second, the egress log rate): %d denied, %d allowed; most frequent rules: %s; the first was for host %q",
			l.n, l.rate, l.denied, l.allowed, strings.Join(top, ", "), l.firstHost)}
	l.n, l.denied, l.allowed, l.rules, l.firstHost = 0, 0, 0, nil, ""
	return d
}

// WildcardNote is explain's sentence on the wildcard rules of a host list ("" without one): a
// wildcard lets a program make serve resolve any name below it, a way out for data through
// DNS queries, which the proxy bounds per scope (a call, a container) with
// DefaultMaxWildcardNames.
func WildcardNote(rules []policy.HostRule, scope string) string {
	var ws []string
	for _, r := range rules {
		if isWildcard(r) {
			ws = append(ws, r.String())
		}
	}
	if len(ws) == 0 {
		return ""
	}
	return fmt.Sprintf("the wildcard rule %s lets a program make serve resolve any name below it, and each lookup is a DNS query serve sends on its behalf: a way out for data through DNS, bounded to %d distinct names per %s (then refused); list the names exactly to close it",
		strings.Join(ws, ", "), DefaultMaxWildcardNames, scope)
}
