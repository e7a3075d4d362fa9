package serve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLine bounds one inbound JSON-RPC line. A longer line is answered with an error and
// discarded as it streams past: it is never held in memory whole.
const MaxLine = 16 << 20

// LineTransport is newline-delimited JSON-RPC over a reader and a writer (stdio by default),
// like the go-sdk's StdioTransport except that one bad line never ends the session: a line
// that is not JSON is answered -32700, one that is not a request (a batch, `{}`, a bare
// value) -32600, an over-long one -32600, and the server goes on reading. Each connection
// has its own session id, so executors can keep per-session state over stdio too.
type LineTransport struct {
	In  io.ReadCloser  // nil: os.Stdin
	Out io.WriteCloser // nil: os.Stdout (never closed)
	Max int            // 0: MaxLine
}

// Connect implements mcp.Transport.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	in, out := t.In, t.Out
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = nopWriteCloser{os.Stdout}
	}
	max := t.Max
	if max <= 0 {
		max = MaxLine
	}
	c := &lineConn{in: in, out: out, id: newID(), incoming: make(chan lineOrErr), closed: make(chan struct{})}
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
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max {
				tooLong, line = true, nil // drop what was kept: memory comes back
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if len(line) > 0 || tooLong {
			if msg, bad := c.decode(line, tooLong, max); bad != nil {
				if werr := c.writeRaw(bad); werr != nil {
					c.deliver(lineOrErr{err: werr})
					return
				}
			} else if msg != nil && !c.deliver(lineOrErr{msg: msg}) {
				return
			}
		}
		if cap(line) > 1<<20 {
			line = nil // a big frame's buffer is not kept for the small ones after it
		}
		line, tooLong = line[:0], false
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.EOF
			}
			c.deliver(lineOrErr{err: err})
			return
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

// decode returns the message, or the error response to write back, or neither (a blank line).
func (c *lineConn) decode(line []byte, tooLong bool, max int) (jsonrpc.Message, []byte) {
	if tooLong {
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message longer than %d bytes: discarded", max))
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, nil
	}
	if !json.Valid(line) {
		return nil, errorLine(nil, jsonrpc.CodeParseError, "parse error: the line is not valid JSON")
	}
	if line[0] == '[' {
		return nil, errorLine(nil, jsonrpc.CodeInvalidRequest, "JSON-RPC batches are not supported: send one message per line")
	}
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(line, &probe)
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, errorLine(probe.ID, jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// errorLine is a JSON-RPC error response; the id is echoed when the bad message had a usable one.
func errorLine(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 || (id[0] != '"' && (id[0] < '0' || id[0] > '9') && id[0] != '-') {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
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
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encode a JSON-RPC message: %w", err)
	}
	return c.writeRaw(append(b, '\n'))
}

func (c *lineConn) Close() error {
	var err error
	c.once.Do(func() {
		close(c.closed)
		err = errors.Join(c.in.Close(), c.out.Close())
	})
	return err
}
