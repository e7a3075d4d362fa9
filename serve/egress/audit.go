package egress

import (
	"encoding/json"
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/serve/audit"
)

// Audit entry values for egress decisions: the tool is "egress", the decision "allowed" or
// "denied", the rule the one that decided, the arguments what was asked for.
const (
	AuditTool    = "egress"
	AuditAllowed = "allowed"
	AuditDenied  = "denied"
)

// Entry renders the decision as an audit log line.
func (d Decision) Entry(server, session, policyHash string) audit.Entry {
	args, _ := json.Marshal(map[string]any{ // plain data: cannot fail
		"method": d.Method, "host": d.Host, "port": d.Port, "addr": d.Addr, "client": d.Client,
		"bytes_out": d.BytesOut, "bytes_in": d.BytesIn,
	})
	dec := AuditDenied
	if d.Allowed {
		dec = AuditAllowed
	}
	return audit.Entry{
		Time:   d.Time.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"),
		Server: server, Session: session, Tool: AuditTool, Arguments: args,
		Decision: dec, Rule: d.Rule, Reason: d.Reason, DurationMS: d.Duration.Milliseconds(), PolicyHash: policyHash,
	}
}

// String is the decision in one line, for logs.
func (d Decision) String() string {
	s := d.Method + " " + hostPort(d.Host, d.Port) + " "
	if d.Allowed {
		return s + "allowed by " + strconv.Quote(d.Rule)
	}
	return s + "denied (" + d.Rule + "): " + d.Reason
}
