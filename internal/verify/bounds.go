package verify

import (
	"strconv"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/httpbound"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Bound is one limit on what reaches serve from a client, a sandbox or an upstream: every
// boundary has one (issue 22), and explain and the README list them all.
type Bound struct {
	Boundary string `json:"boundary"` // where it applies: "stdio", "http", "audit", "egress", "e2b", "calls"
	What     string `json:"what"`
	Value    string `json:"value"`
	Key      string `json:"key,omitempty"` // the policy key that sets it; "" = fixed in this build
	Past     string `json:"past"`          // what happens past it
}

// Bounds lists the bounds in force for p. Values come from the policy and from the constants
// the enforcing packages use, so the list cannot drift from the code.
func Bounds(p *policy.Policy) []Bound {
	l := p.Limits
	n := strconv.Itoa
	bs := []Bound{
		{"calls", "wall clock per call", l.Timeout.String(), "limits.timeout", "the call's process tree is killed; the result says timed_out"},
		{"calls", "output per stream", l.MaxOutputBytes.String(), "limits.max_output_bytes", "the rest is dropped; the result says truncated"},
		{"calls", "calls running at once, shared fairly between sessions", n(l.MaxConcurrent), "limits.max_concurrent", "a free slot goes to the waiting session with the fewest calls running (over HTTP a session already running one cannot take the last); more wait up to limits.timeout, then are refused"},
		{"calls", "a refused or failed call's text", size(bounds.MaxErrorText), "", "clipped, saying how many bytes were cut"},
		{"calls", "JSON shape of a call's arguments", n(bounds.MaxArgValues) + " values, " + n(bounds.MaxArgDepth) + " levels deep", "", "refused unread (rule tool.arguments) and audited; the executor never decodes them"},
		{"calls", "an unknown tool's name in the answer", n(bounds.MaxEchoedName) + " bytes", "", "-32602 quoting the name's start and its length; audited refused (rule tool.name)"},
		{"stdio, http", "JSON shape of one whole message", n(bounds.MaxMessageValues) + " values, " + n(bounds.MaxMessageDepth) + " levels deep", "", "refused from its raw bytes (-32600 with the request's id) before anything decodes it"},
		{"http", "JSON-RPC batches", "none accepted", "", "400, -32600 (stdio refuses them too)"},
		{"stdio, http", "what an answer may echo: a message's id; a message other than a tools/call; a tools/call's params", n(bounds.MaxIDBytes) + " bytes; " + size(bounds.MaxOtherMessage) + "; must decode", "", "refused before the SDK decodes it (-32600, -32602 for params), its keys read as the SDK reads them (as written, not case-folded): its errors quote the method, a name or the whole params, several times their size"},
		{"stdio", "an error answer's message", size(bounds.MaxErrorText), "", "clipped, saying how many bytes were cut; data over it dropped"},
		{"stdio", "one JSON-RPC message", size(bounds.MaxLine), "", "answered -32600 with the request's id, never held whole; a tools/call is audited refused (stdio.max_message)"},
		{"stdio", "requests read and not yet answered", n(bounds.MaxInflight) + ", " + size(bounds.MaxInflightBytes) + " of their lines", "", "serve stops reading stdin until an answer is written: a client that does not read its answers only stalls itself"},
		{"stdio, http", "answers made and not yet read by the client", size(bounds.MaxUnreadAnswers) + " a client (an HTTP session), " + size(bounds.MaxUnreadAnswersAll) + " in all (estimated as JSON writes them)", "", "no new call runs for the session until it reads (rule serve.unread_answers after limits.timeout); the bound for all is shared by session: past it, a session holding less than its share is let in and the oldest unread answer of the one holding the most is cut (its connection closed)"},
		{"http", "open connections", n(l.MaxConnections), "limits.max_connections", "a new connection closes the oldest one without a valid token, else the one whose request has waited longest for its body, else (shared by session) the newest request of the session holding the most, past its share, else the oldest idle one, else that session's newest request if it holds more than one"},
		{"http", "connections without a valid token", "a quarter of limits.max_connections", "", "the oldest such connection that has sent nothing is closed (else the oldest such); the rest is kept for clients with the token"},
		{"http", "live MCP sessions", n(l.MaxSessions), "limits.max_sessions", "a new initialize closes the least recently used idle session; 503 naming the key when every session is busy"},
		{"http", "session without a request", l.SessionIdle.String(), "limits.session_idle", "the session is closed and its sandboxes ended"},
		{"http", "request head", "64KiB, read within " + durationText(bounds.DefaultHeaderTimeout), "", "431, or the connection is closed"},
		{"http", "request body", "4MiB, read within " + durationText(bounds.DefaultBodyTimeout), "", "413, or the connection is cut"},
		{"http", "request bodies read at once, all requests together", size(bounds.DefaultBodyBudget) + " (each body's first " + size(httpbound.FreeBody) + " free)", "", "charged as its bytes arrive, never for the length it declares; shared by MCP session (else by client address): a body that does not fit takes the charge of the newest body still being read of the session holding the most past its share (the budget over the sessions holding any, at least one full body; its connection closed), else 503 with Retry-After"},
		{"http", "idle keep-alive connection", durationText(bounds.DefaultIdleTimeout), "", "the connection is closed"},
		{"http", "an answer's write to a client that stopped reading", durationText(bounds.DefaultWriteStall) + " without progress", "", "the connection is closed and the answer dropped"},
		{"http", "a refused (401, 403) request's body", "250ms", "", "Connection: close; the body is not drained"},
		{"http", "calls waiting for a slot whose POST was closed (the client gone: their answer cannot be delivered)", "none kept", "", "refused at once (rule serve.request_gone), audited, never run: the connection bound and the body budget bound what is waiting"},
		{"http", "a tools/call whose client left, while the SDK still has it", "its POST stays counted until the call is handled, at most limits.timeout + 10s", "", "the connection bound and the body budget still count it: past the budget the next calls get 503 as their bodies are read"},
		{"log", "one value of a stderr log line", size(bounds.MaxLogValue), "", "clipped, saying how many bytes were cut"},
		{"log", "lines serve logs to stderr", n(bounds.MaxLogLines) + " in " + durationText(bounds.LogWindow), "", "the rest are dropped; the next line that passes says how many"},
		{"audit", "one audit line", size(audit.MaxLine), "", "fields are clipped to fit and listed under clipped with their full length and sha256; a line serve did not write is chained over with a foreign marker and named by audit verify"},
		{"audit", "wait for the log's lock", durationText(audit.LockWait), "", "the call is refused without running, naming audit.path and the process holding the lock"},
		{"audit", "lines the calls make, refused ones included", "none: every call's lines are written", "", "a client's flood of refused calls grows the log (about 2,600 lines and 1.5 MB a second); rotate by size (logrotate maxsize); on a full disk calls are refused without running, and the held room keeps running calls' outcomes"},
		{"audit", "the file at audit.path", "a regular file of serve's user with one name (not a link, FIFO or device)", "", "the call is refused without running, naming audit.path; fixed, the next call uses it"},
	}
	return bs
}

// WorkspaceBounds are the transactional workspace's bounds, for the schemes whose calls write
// a host workspace through a layer.
func WorkspaceBounds(l policy.Limits) []Bound {
	n := strconv.Itoa
	return []Bound{
		{"workspace", "what one call may leave in the workspace (file content, through its layer)", l.WorkspaceQuota.String(), "limits.workspace_quota", "a watchdog stops the call and discards its writes; a commit refuses each file past it"},
		{"workspace", "entries one commit looks at", n(wslayer.MaxEntries), "", "the rest are refused, listed in the result"},
		{"workspace", "directories deep below the workspace root", n(wslayer.MaxDepth), "", "what lies deeper is refused, listed in the result"},
		{"workspace", "entries in a running call's layer; directories deep there", n(wslayer.MaxLayerEntries) + "; " + n(4*wslayer.MaxDepth), "", "the quota's watchdog takes the layer as over limits.workspace_quota: the call is stopped, its writes discarded"},
	}
}

// FileBounds are the file tools' bounds and those of the pictures a call returns, for the
// schemes that offer them.
func FileBounds(l policy.Limits) []Bound {
	n := strconv.Itoa
	return []Bound{
		{"files", "one file write_file or read_file moves", fileBytes(l), "limits.max_file_bytes", "write_file is refused naming the key; read_file returns the first bytes, marked truncated"},
		{"files", "entries list_files returns", n(executor.MaxListEntries), "", "the rest are counted (entries_more)"},
		{"files", "pictures one call returns", n(executor.MaxImages) + ", " + size(executor.MaxImageBytes) + " each, " + size(executor.MaxImagesBytes) + " together", "", "the rest are listed with why they were not sent"},
	}
}

// EgressBounds are the bounds of a host list's egress proxy, one per scope ("call",
// "container"); past says what happens past the connection bound.
func EgressBounds(l policy.Limits, scope, past string) []Bound {
	n := strconv.Itoa
	return []Bound{
		{"egress", "proxy connections of one " + scope, n(l.EgressConnections), "limits.egress_connections", past + "; other sandboxes are not affected"},
		{"egress", "distinct names resolved under wildcard rules, per " + scope, n(egress.DefaultMaxWildcardNames), "", "403 (rule limit) before any lookup"},
		{"egress", "decisions logged one by one, per " + scope, n(egress.DefaultLogRate) + " a second", "", "the rest are counted in one summary entry a second (rule log-rate)"},
		{"egress", "host name in a decision", n(egress.MaxLogHost) + " bytes", "", "clipped, with the full name's sha256"},
		{"egress", "the head of a listed host's answer to a plain-http request", size(egress.DefaultMaxAnswerHeadBytes), "", "502 (rule upstream), the rest never read"},
	}
}

func size(b int) string { return policy.Size(b).String() }

// durationText is a duration as the policy writes it.
func durationText(d time.Duration) string { return policy.Duration{Duration: d}.String() }

func fileBytes(l policy.Limits) string {
	if l.MaxFileBytes == 0 {
		return "0 (no file tools)"
	}
	return l.MaxFileBytes.String()
}
