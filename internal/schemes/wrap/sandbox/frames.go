package sandbox

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Bounds of the relay (README: "Wrap another MCP server").
const (
	// MaxFrame is the largest JSON-RPC message (one line) relayed either way. A longer one is
	// never held whole: it is read past and dropped, answered with an error for its id.
	MaxFrame = 4 << 20
	// MaxInflight is how many client requests the relay tracks at once (tools/call and
	// tools/list); past it a new one is refused with an error, the server never sees it.
	MaxInflight = 256
	// MaxTrackedID is the longest id (its idKey, in bytes) of a request the relay tracks
	// (tools/call, tools/list): it is held until the answer, and after a timeout.
	MaxTrackedID = 1024
	// peekBytes of an oversized frame are kept to find its id.
	peekBytes = 64 << 10
)

// frameReader reads newline-delimited frames of at most max bytes with a fixed buffer.
type frameReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func newFrameReader(r io.Reader, max int) *frameReader {
	if mutated("wrap-frame-cap") {
		max = 1 << 40
	}
	return &frameReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next frame without its newline. oversize: the frame was longer than max;
// line then holds its first bytes only (for the id). err is io.EOF at the end (a last frame
// without a newline is returned first).
func (f *frameReader) next() (line []byte, oversize bool, err error) {
	f.buf = f.buf[:0]
	for {
		chunk, err := f.br.ReadSlice('\n')
		if !oversize {
			if len(f.buf)+len(chunk) > f.max+1 {
				oversize = true // keep the first peekBytes only, for the id
				if len(f.buf) > peekBytes {
					f.buf = f.buf[:peekBytes]
				} else if keep := min(peekBytes-len(f.buf), len(chunk)); keep > 0 {
					f.buf = append(f.buf, chunk[:keep]...)
				}
			} else {
				f.buf = append(f.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(f.buf, []byte("\n")), oversize, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case len(f.buf) > 0 && errors.Is(err, io.EOF):
			return f.buf, oversize, nil
		default:
			return nil, false, err
		}
	}
}

// message is what the relay reads of a frame.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// idKey is a request id as a map key (its compact JSON; a string's decoded value, encoded
// again: "\u0061" and "a" are one id, as the server reads them); "" for none or null.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if len(id) == 0 || json.Compact(&b, id) != nil || b.String() == "null" {
		return ""
	}
	if b.Bytes()[0] == '"' && !mutated("wrap-id-canonical") {
		var s string
		if json.Unmarshal(b.Bytes(), &s) == nil {
			c, _ := json.Marshal(s) // a string: cannot fail
			return string(c)
		}
	}
	return b.String()
}

// maxPlainID is the largest integer every JSON parser holds exactly (2^53 - 1).
const maxPlainID = 1<<53 - 1

// plainID says whether a request id (its idKey) comes back from any server as it went: a
// string, or an integer written plainly (no fraction, exponent or -0) within ±maxPlainID. A
// server reads 1.0, 1e0 or -0 as the number 1 or 0, or 9007199254740993 as ...992, and answers
// with that: an answer the relay cannot match to its request, so a call's outcome would go
// unaudited and a tools/list answer unfiltered.
func plainID(key string) bool {
	if key == "" || key[0] == '"' {
		return true
	}
	if key == "0" || key[0] == '0' || strings.HasPrefix(key, "-0") {
		return key == "0"
	}
	n, err := strconv.ParseInt(key, 10, 64)
	return err == nil && n >= -maxPlainID && n <= maxPlainID
}

// peekID finds the top-level "id" of a frame's first bytes (an oversized frame): what comes
// before it must be complete; nil when it cannot be found.
func peekID(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if k == "id" {
			return v
		}
	}
	return nil
}

// errorFrame is a JSON-RPC error response.
func errorFrame(id json.RawMessage, code int, msg string, data any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e}) // plain data
	return b
}
