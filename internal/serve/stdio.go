package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one inbound JSON-RPC line. A longer line is answered with an error and
// discarded as it streams past: it is never held in memory whole.
const MaxLine = bounds.MaxLine

// MaxInflight bounds the requests one stdio session has handed to the server and not yet
// answered, MaxInflightBytes the bytes of their lines. At either bound serve stops reading
// stdin until an answer is written, so a client that writes requests faster than it reads the
// answers (or never reads them) holds at most this much of serve's memory, and only slows
// itself down.
const (
	MaxInflight      = bounds.MaxInflight
	MaxInflightBytes = bounds.MaxInflightBytes
)

// LineTransport is newline-delimited JSON-RPC over a reader and a writer (stdio by default),
// like the go-sdk's StdioTransport except that one bad line never ends the session: a line
// that is not JSON is answered -32700, one that is not a request (a batch, `{}`, a bare
// value) -32600, an over-long one -32600, and the server goes on reading. Each connection
// has its own session id, so executors can keep per-session state over stdio too.
type LineTransport struct {
	In  io.ReadCloser  // nil: stdin (stdinReader)
	Out io.WriteCloser // nil: os.Stdout (never closed)
	Max int            // 0: MaxLine
	// OnOversize, if set, hears of every line discarded for being over Max, after its error
	// answer is written (Run logs it and audits a tools/call as refused).
	OnOversize func(Oversize)
	// afterAnswer, if set, is called after each answer (a response) is written (Run's
	// deferred start-up: afterToolsList).
	afterAnswer func()
	// unread, if set, counts the answers being written (Run sets the runner's).
	unread *unread
}

// Oversize describes a discarded over-long line. Its id, method and tool come from a tolerant
// scan of the line's first 64 KiB (and of its last 4 KiB for the id): the line is never held whole.
type Oversize struct {
	Session string
	ID      json.RawMessage // the request's id; nil if none was found
	Method  string
	Tool    string // params.name of a tools/call
	Size    int64  // bytes, newline excluded
	Limit   int
	SHA256  string // of the whole line, newline excluded
	// Why, when set, is why a line within the size limit was refused unread (not JSON, a
	// batch, nested too deep); "" for an over-long line.
	Why string
}

const (
	oversizeHead = 64 << 10
	oversizeTail = 4 << 10
)

// Connect implements mcp.Transport.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	in, out := t.In, t.Out
	if in == nil {
		in = stdinReader()
	}
	if out == nil {
		out = nopWriteCloser{os.Stdout}
	}
	max := t.Max
	if max <= 0 {
		max = MaxLine
	}
	c := &lineConn{in: in, out: out, id: newID(), incoming: make(chan lineOrErr), closed: make(chan struct{}), onOversize: t.OnOversize, max: max,
		pending: map[jsonrpc.ID][]pendingReq{}, answered: make(chan struct{}, 1), afterAnswer: t.afterAnswer, unread: t.unread}
	c.unread.open(c.id)
	go c.readLoop(max)
	return c, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

type lineOrErr struct {
	msg jsonrpc.Message
	err error
}

type lineConn struct {
	in       io.ReadCloser
	out      io.WriteCloser
	id       string
	writeMu  sync.Mutex
	incoming chan lineOrErr
	once     sync.Once
	closed   chan struct{}

	onOversize  func(Oversize)
	max         int // the longest line read (Max)
	afterAnswer func()
	unread      *unread

	// The requests delivered and not yet answered (MaxInflight, MaxInflightBytes).
	inflightMu    sync.Mutex
	pending       map[jsonrpc.ID][]pendingReq // request id -> its unanswered line: one, a reuse is refused (sent)
	inflight      int
	inflightBytes int
	answered      chan struct{} // 1-buffered: an answer was written
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (c *lineConn) SessionID() string { return c.id }

func (c *lineConn) readLoop(max int) {
	r := bufio.NewReaderSize(c.in, 64<<10)
	var line []byte
	var over *overLine // the line being discarded, if it is over max
	for {
		chunk, err := r.ReadSlice('\n')
		if over == nil && len(line)+len(chunk) > max {
			over = newOverLine(line) // keeps its start and hash only: memory comes back
			line = nil
		}
		if over != nil {
			if err == nil {
				chunk = chunk[:len(chunk)-1] // the newline is not the message's
			}
			over.add(chunk)
		} else {
			line = appendLine(line, chunk)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if over != nil {
			o := over.done(c.id, max)
			if werr := c.writeRaw(errorLine(o.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message of %d bytes, over the %d-byte limit: discarded", o.Size, max))); werr != nil {
				c.deliver(lineOrErr{err: werr})
				return
			}
			if c.onOversize != nil {
				c.onOversize(o)
			}
		} else if len(line) > 0 {
			if msg, bad, refused := c.decode(line); bad != nil {
				if werr := c.writeRaw(bad); werr != nil {
					c.deliver(lineOrErr{err: werr})
					return
				}
				if c.onOversize != nil && refused != nil && !mutated("stdio-refusal-unaudited") {
					c.onOversize(*refused)
				}
			} else if msg != nil {
				if inUse := c.sent(msg, len(line)); inUse != nil {
					if werr := c.refuseInUse(line, inUse); werr != nil {
						c.deliver(lineOrErr{err: werr})
						return
					}
				} else if !c.deliver(lineOrErr{msg: msg}) || !c.waitRoom() {
					return
				}
			}
		}
		if cap(line) > 1<<20 {
			line = nil // a big frame's buffer is not kept for the small ones after it
		}
		line, over = line[:0], nil
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.deliver(lineOrErr{err: err})
			return
		}
	}
}

// appendLine appends chunk to the line being read, doubling its buffer when it must grow:
// append grows a large slice by a quarter at a time, and the copies of a 16 MiB line read 64 KiB
// at a time added up to five times its size (60 MB allocated for a 12 MiB line), twice this way.
func appendLine(line, chunk []byte) []byte {
	if need := len(line) + len(chunk); need > cap(line) && !mutated("stdio-line-grow") {
		grown := make([]byte, len(line), max(need, 2*cap(line)))
		copy(grown, line)
		line = grown
	}
	return append(line, chunk...)
}

// overLine follows a line too long to keep: its first and last bytes, length and sha256.
type overLine struct {
	head, tail []byte
	n          int64
	h          hash.Hash
}

func newOverLine(start []byte) *overLine {
	o := &overLine{h: sha256.New()}
	o.add(start)
	return o
}

func (o *overLine) add(b []byte) {
	o.h.Write(b)
	o.n += int64(len(b))
	if k := min(len(b), oversizeHead-len(o.head)); k > 0 {
		o.head = append(o.head, b[:k]...)
	}
	if len(b) >= oversizeTail {
		o.tail = append(o.tail[:0], b[len(b)-oversizeTail:]...)
	} else {
		o.tail = append(o.tail, b...)
		if len(o.tail) > oversizeTail {
			o.tail = append(o.tail[:0], o.tail[len(o.tail)-oversizeTail:]...)
		}
	}
}

func (o *overLine) done(session string, max int) Oversize {
	id, method, tool := scanRequest(o.head)
	if mutated("stdio-oversize-id") {
		id, method = nil, ""
	}
	if id == nil && !mutated("stdio-oversize-id") {
		if m := tailID().FindSubmatch(o.tail); m != nil {
			id = m[1]
		}
	}
	return Oversize{Session: session, ID: id, Method: method, Tool: tool, Size: o.n, Limit: max, SHA256: hex.EncodeToString(o.h.Sum(nil))}
}

// tailID finds an id that ends the message (a request whose params come first). Compiled at
// its first use, an over-long line: its 256 repeats made it most of serve's package
// initialisation, on every start's path.
var tailID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[,{]\s*"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.){0,256}")\s*}\s*$`)
})

// scanRequest reads the top-level id, method and params.name from the start of a JSON-RPC
// message, tolerating that the start ends anywhere.
func scanRequest(b []byte) (id json.RawMessage, method, tool string) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, "", ""
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return id, method, tool
		}
		switch k, _ := kt.(string); k {
		case "id":
			id = nil // the last id is the message's: an earlier one is not
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return id, method, tool
			}
			if !mutated("stdio-scan-id-prefix") {
				// the decoder ends a number where it stops being one: "id":01 gave 0, 0x10 gave
				// 0 (atk49b F3). Only an id that a , or } ends is the id sent.
				if rest := bytes.TrimLeft(b[min(int(dec.InputOffset()), len(b)):], " \t\r\n"); len(rest) == 0 || rest[0] != ',' && rest[0] != '}' {
					return nil, method, tool
				}
			}
			id = raw
		case "method":
			if dec.Decode(&method) != nil {
				return id, method, tool
			}
		case "params":
			if t, err := dec.Token(); err != nil || t != json.Delim('{') {
				return id, method, tool
			}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return id, method, tool
				}
				if kt == "name" {
					if dec.Decode(&tool) != nil {
						return id, method, tool
					}
				} else if skipValue(dec) != nil {
					return id, method, tool
				}
			}
			if _, err := dec.Token(); err != nil {
				return id, method, tool
			}
		default:
			if skipValue(dec) != nil {
				return id, method, tool
			}
		}
	}
	return id, method, tool
}

// skipValue reads past one JSON value token by token, holding none of it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := t.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// pendingReq is a request delivered and not yet answered: its line's size, and whether it is a
// tools/call (whose answer unread counts while it is written).
type pendingReq struct {
	size int
	call bool
}

// sent counts a request delivered to the server, until its answer is written (Write). A request
// whose id a delivered one still holds is not counted, and returned: the caller refuses it
// (refuseInUse) and never delivers it. An answer is matched to its request by its id alone, so
// each id pending stands for one request: the SDK drops a request under an id in use without
// an answer (its jsonrpc2 clears the id, and takes it for a notification), and the entry such a
// request left was the one the next answer under that id was judged by. A ping's answer then
// paid a big answer's estimate, and a big answer was written uncounted: 14 of 14 big calls ran
// with nothing read, 565 MiB (attack round atk45b F1, F2). Ids are the SDK's own (req.ID as it
// decoded them: 1 and 1.0 are one id, "1" and 1 two, escapes decoded), so serve and the SDK
// judge an id in use alike.
func (c *lineConn) sent(msg jsonrpc.Message, size int) (inUse *jsonrpc.Request) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || mutated("stdio-inflight") {
		return nil
	}
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	if len(c.pending[req.ID]) > 0 && !mutated("stdio-id-in-use") {
		return req
	}
	c.pending[req.ID] = append(c.pending[req.ID], pendingReq{size: size, call: req.Method == "tools/call"})
	c.inflight++
	c.inflightBytes += size
	return nil
}

// refuseInUse answers a request whose id is in use with -32600 Invalid Request, as the SDK's
// HTTP transport answers a POST carrying one ("duplicate in-flight request ID"), but with id
// null: over stdio an answer with the id would be taken for the pending request's (the SDK's
// jsonrpc2 clears such a request's id for that reason). A tools/call refused so is audited.
func (c *lineConn) refuseInUse(line []byte, req *jsonrpc.Request) error {
	id, _ := json.Marshal(req.ID.Raw())
	why := fmt.Sprintf("duplicate in-flight request ID %s: a request under this id is not yet answered; use an id not in use", ClipText(string(id), 256))
	if err := c.writeRaw(errorLine(nil, jsonrpc.CodeInvalidRequest, why)); err != nil {
		return err
	}
	if c.onOversize != nil {
		o := newOverLine(bytes.TrimSpace(line)).done(c.id, c.max)
		o.ID, o.Method, o.Why = id, req.Method, why
		c.onOversize(o)
	}
	return nil
}

// take forgets the request msg answers, before its answer is written: as the SDK forgets it
// before it sends the answer, so a client that reuses the id once it has read the answer is
// never refused for it. The request still counts in flight until written (written).
func (c *lineConn) take(msg jsonrpc.Message) (r pendingReq, ok bool) {
	resp, isResp := msg.(*jsonrpc.Response)
	if !isResp {
		return r, false
	}
	c.inflightMu.Lock()
	defer c.inflightMu.Unlock()
	reqs, ok := c.pending[resp.ID]
	if !ok {
		return r, false
	}
	r = reqs[0]
	if len(reqs) == 1 {
		delete(c.pending, resp.ID)
	} else {
		c.pending[resp.ID] = reqs[1:]
	}
	return r, true
}

// written ends a request taken (take) once its answer is out (written or lost with the
// connection), and wakes the read loop.
func (c *lineConn) written(r pendingReq) {
	c.inflightMu.Lock()
	c.inflight--
	c.inflightBytes -= r.size
	c.inflightMu.Unlock()
	select {
	case c.answered <- struct{}{}:
	default:
	}
}

// waitRoom holds the read loop while the unanswered requests are at MaxInflight or
// MaxInflightBytes; false if the connection closed meanwhile.
func (c *lineConn) waitRoom() bool {
	for {
		c.inflightMu.Lock()
		room := c.inflight < MaxInflight && c.inflightBytes < MaxInflightBytes
		c.inflightMu.Unlock()
		if room {
			return true
		}
		select {
		case <-c.answered:
		case <-c.closed:
			return false
		}
	}
}

func (c *lineConn) deliver(m lineOrErr) bool {
	select {
	case c.incoming <- m:
		return true
	case <-c.closed:
		return false
	}
}

// decode returns the message, or the error response to write back and what was refused (for
// serve's log and audit), or neither (a blank line).
func (c *lineConn) decode(line []byte) (jsonrpc.Message, []byte, *Oversize) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil, nil
	}
	// refuse answers a line refused unread with the id a tolerant scan finds in it (the
	// client's request is answered as such, not only with id null: attack round atk31, F1),
	// and reports it: a tools/call refused so is audited, as an over-long one is.
	refuse := func(code int, why string, echo bool) (jsonrpc.Message, []byte, *Oversize) {
		o := newOverLine(line).done(c.id, c.max)
		if line[0] == '[' { // a batch: the first message's method and tool, no one id
			o.ID, o.Method, o.Tool = nil, "", ""
			if _, m, tl := scanRequest(bytes.TrimSpace(line[1:])); m != "" {
				o.Method, o.Tool = m, tl
			}
		}
		o.Why = why
		id := o.ID
		if !echo {
			id = nil
		}
		return nil, errorLine(id, code, why), &o
	}
	if !json.Valid(line) {
		if why := messageShape(line); why != "" && !mutated("message-depth-as-invalid") {
			// Go's JSON checker stops at 10,000 levels: a deeper message is valid JSON past
			// serve's own bound, which says so (atk48b F5)
			return refuse(jsonrpc.CodeInvalidRequest, why, true)
		}
		return refuse(jsonrpc.CodeParseError, "parse error: the line is not valid JSON", true)
	}
	if line[0] == '[' {
		return refuse(jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: send one message per line", false)
	}
	p, id, code, why := judgeMessage(line)
	if why != "" {
		_, _, o := refuse(int(code), why, false)
		if id != nil { // the message parsed: the id the judge read is certain
			o.ID = id
		}
		return nil, errorLine(id, int(code), why), o
	}
	msg, err := p.message(line)
	if err != nil {
		why := err.Error()
		if why == "invalid request" { // the SDK's words for a message that is neither kind
			why = "a message needs a method (a request or a notification) or an id with a result or an error"
		}
		return nil, errorLine(id, jsonrpc.CodeInvalidRequest, "invalid request: "+why), nil
	}
	return msg, nil, nil
}

// errorLine is a JSON-RPC error response; the id is echoed when the bad message had a usable one.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') || !json.Valid(id) && !mutated("stdio-error-id-unchecked") {
		// an id the scan found but that is no JSON (0123, "\q") would make the answer no JSON,
		// and Marshal's error a blank line (attack round atk32, N1): such a request has no id
		id = json.RawMessage("null")
	} else if idProblem(id) != "" && !mutated("stdio-error-id-any") {
		// nor has one the SDK would answer as another (1.5, "\ud800"): the answer carries an
		// id only as sent (atk49b F3)
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: ClipText(msg, MaxErrorText)}})
	return append(b, '\n')
}

func (c *lineConn) writeRaw(b []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(b)
	return err
}

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	// the request this answers, by its id (one request an id: sent), is no longer pending,
	// whether its answer is written or lost
	r, pending := c.take(msg)
	err := c.write(ctx, msg, r, pending)
	if pending {
		c.written(r)
	}
	if _, ok := msg.(*jsonrpc.Response); ok && c.afterAnswer != nil {
		c.afterAnswer()
	}
	return err
}

// write writes msg, the answer to r if pending: a tools/call answer is counted at its exact
// size while it waits for the client to read the ones before it, and is written
// (unread.writing); a result (not the SDK's error for a call that never ran) pays an estimate.
func (c *lineConn) write(ctx context.Context, msg jsonrpc.Message, r pendingReq, pending bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(clipErrorAnswer(msg))
	if err != nil {
		return fmt.Errorf("encode a JSON-RPC message: %w", err)
	}
	done := func() {}
	if resp, _ := msg.(*jsonrpc.Response); pending && r.call {
		done = c.unread.writing(c.id, heldPerAnswerByte*int64(len(b)+1), resp.Error == nil)
	}
	err = c.writeRaw(append(b, '\n'))
	done()
	return err
}

// clipErrorAnswer bounds an error answer's message to MaxErrorText and drops data over it: the
// SDK's errors quote what the client sent (a resource's URI, a prompt's name, params that did
// not decode), and serve writes no answer much larger than the request it answers. An answer
// without a code is given JSON-RPC's.
func clipErrorAnswer(msg jsonrpc.Message) jsonrpc.Message {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error == nil || mutated("answer-error-clip") {
		return msg
	}
	wire := &jsonrpc.Error{Message: resp.Error.Error()} // as the SDK's encoder makes it
	if we, ok := resp.Error.(*jsonrpc.Error); ok {
		wire = &jsonrpc.Error{Code: we.Code, Message: we.Message, Data: we.Data}
	} else if errors.As(resp.Error, &we) {
		wire.Code = we.Code
	}
	if wire.Code == 0 && !mutated("answer-error-code-zero") {
		// the SDK's plain errors carry no code, and 0 is none of JSON-RPC's (trial46 F6): a
		// request before initialize is an invalid request, any other an internal error
		wire.Code = jsonrpc.CodeInternalError
		if strings.Contains(wire.Message, "during session initialization") {
			wire.Code = jsonrpc.CodeInvalidRequest
			wire.Message += ": send initialize first"
		}
	} else if len(wire.Message) <= MaxErrorText && len(wire.Data) <= MaxErrorText {
		return msg
	}
	wire.Message = ClipText(wire.Message, MaxErrorText)
	if len(wire.Data) > MaxErrorText {
		wire.Data = nil
	}
	return &jsonrpc.Response{ID: resp.ID, Error: wire}
}

func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		c.unread.close(c.id)
		close(c.closed)
		err = errors.Join(c.in.Close(), c.out.Close())
	})
	return err
}
