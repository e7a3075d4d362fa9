// Package bounds holds the fixed bounds serve enforces on what reaches it, as constants: serve
// enforces them and explain (verify.Bounds) lists them, so the list cannot drift from the code
// and verify need not import the MCP server to speak of them.
package bounds

import (
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// MaxLine bounds one inbound JSON-RPC line on stdio. A longer line is answered with an error
// and discarded as it streams past: it is never held in memory whole.
const MaxLine = 16 << 20

// MaxInflight bounds the requests one stdio session has handed to the server and not yet
// answered, MaxInflightBytes the bytes of their lines. At either bound serve stops reading
// stdin until an answer is written, so a client that writes requests faster than it reads the
// answers (or never reads them) holds at most this much of serve's memory, and only slows
// itself down.
const (
	MaxInflight      = 64
	MaxInflightBytes = 32 << 20
)

// MaxUnreadAnswers bounds the answer bytes one session's client has not yet read (written to a
// pipe or connection that is not being drained), MaxUnreadAnswersAll those of every session: a
// call starts only while both are under their bound, so a client that sends calls and never
// reads their answers (tens of MB each for a read_file of control bytes) holds at most about
// this much of serve's memory (plus the calls already running), and stalls its own sessions:
// the bound for all is shared by session (serve's unread.roomLocked).
const (
	MaxUnreadAnswers    = 32 << 20
	MaxUnreadAnswersAll = 128 << 20
)

// Bounds on a tools/call before anything decodes its arguments or echoes its name.
const (
	// MaxArgValues and MaxArgDepth bound the JSON shape of a call's arguments (rule
	// tool.arguments): a cheap scan refuses more values or deeper nesting before any decoding,
	// so a 12 MB message of four million "" cannot take hundreds of MB to decode.
	MaxArgValues = audit.MaxJSONValues
	MaxArgDepth  = audit.MaxJSONDepth
	// MaxEchoedName is how much of an unknown tool's name a refusal quotes.
	MaxEchoedName = 200
)

// MaxMessageValues and MaxMessageDepth bound the JSON shape of a whole inbound message, checked
// on its raw bytes before anything decodes it (the SDK decodes every part of a message, _meta
// and ids included: 14 MB of zeros in _meta took serve to 543 MB). A call's arguments have
// their own, tighter bound inside it (MaxArgValues, MaxArgDepth).
const (
	MaxMessageValues = MaxArgValues + 4096
	MaxMessageDepth  = MaxArgDepth + 8
)

// MaxIDBytes bounds a message's id as written, MaxOtherMessage a whole message that is not a
// tools/call (initialize, ping, a list, a notification, a client's answer): every answer echoes
// the id, and the SDK's errors quote a method name, a prompt's name, a resource's URI or (for
// params that do not decode) the whole params %q-quoted, up to five times their size: a 15 MiB
// line of 0x7f bytes made a 75 MB answer, four unread took serve past 1.4 GB. A tools/call's
// params are checked to decode before the SDK sees them, so its errors quote nothing unbounded.
const (
	MaxIDBytes      = 1 << 10
	MaxOtherMessage = 64 << 10
)

// MaxErrorText bounds the text of a refused or failed call's result (a refusal may quote the
// argument it refused, and an argument can be megabytes), and the message of any error answer
// serve writes on stdio.
const MaxErrorText = 8 << 10

// MaxLogValue bounds one value of a line serve logs to stderr (the message included): the SDK
// logs what a client sent (a method, a log level, a URI), and a value of megabytes made a log
// line of megabytes.
const MaxLogValue = 2 << 10

// MaxLogLines lines reach serve's stderr in any LogWindow; the rest are dropped and counted,
// and the next line that passes says how many: a client repeating what the SDK logs (a
// second notifications/initialized, a method before initialize) grew the client's log at the
// rate it sent (200 000 lines, 16.6 MB).
const (
	MaxLogLines = 200
	LogWindow   = 10 * time.Second
)

// Defaults of the HTTP bounds that have no policy key.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	// DefaultWriteStall bounds how long an answer's write may wait for a client that does not
	// read it (no progress): past it the connection is closed and the answer dropped.
	DefaultWriteStall = 30 * time.Second
	// DefaultMaxBody bounds one request body; DefaultBodyBudget the bodies of all requests
	// being read at once (sixteen of the largest).
	DefaultMaxBody    = 4 << 20
	DefaultBodyBudget = 64 << 20
)
