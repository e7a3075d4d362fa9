package egress

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxHello bounds the bytes read while waiting for a complete ClientHello.
const maxHello = 64 << 10

// TLS record and handshake constants the parser needs.
const (
	recordHandshake  = 22
	recordAlert      = 21
	typeClientHello  = 1
	extServerName    = 0
	maxRecordPayload = 1<<14 + 2048 // what crypto/tls accepts in one record
)

// readClientHello reads one TLS ClientHello from r: the handshake records, reassembled when
// the hello is fragmented, up to maxHello bytes. It returns the server name (lower-case, one
// trailing dot removed: OpenSSL and Python send "host." when asked for it, which crypto/tls's
// own parser refuses) and every byte it consumed, to be forwarded upstream unchanged.
//
// The parse follows RFC 8446 §4.1.2 and RFC 6066 §3 as strictly as crypto/tls does where it
// matters for the name check: a duplicate extension, two host names, an empty name or
// trailing bytes make it no ClientHello, so the name checked is the only name upstream sees.
func readClientHello(r io.Reader) (string, []byte, error) {
	var consumed, msg []byte
	for {
		var h [5]byte
		if k, err := io.ReadFull(r, h[:]); err != nil {
			return "", append(consumed, h[:k]...), fmt.Errorf("reading a TLS record: %w", err)
		}
		consumed = append(consumed, h[:]...)
		n := int(binary.BigEndian.Uint16(h[3:]))
		if h[0] != recordHandshake || h[1] != 3 || n == 0 || n > maxRecordPayload {
			return "", consumed, errors.New("not a TLS handshake record")
		}
		if len(consumed)+n > maxHello {
			return "", consumed, fmt.Errorf("ClientHello longer than %d bytes", maxHello)
		}
		body := make([]byte, n)
		if k, err := io.ReadFull(r, body); err != nil {
			return "", append(consumed, body[:k]...), fmt.Errorf("reading a TLS record: %w", err)
		}
		consumed = append(consumed, body...)
		msg = append(msg, body...)
		if len(msg) < 4 {
			continue
		}
		if msg[0] != typeClientHello {
			return "", consumed, fmt.Errorf("handshake message %d is not a ClientHello", msg[0])
		}
		want := 4 + (int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3]))
		if want > maxHello {
			return "", consumed, fmt.Errorf("ClientHello longer than %d bytes", maxHello)
		}
		if len(msg) < want {
			continue
		}
		sni, err := helloServerName(msg[4:want])
		if err != nil {
			return "", consumed, fmt.Errorf("malformed ClientHello: %w", err)
		}
		return strings.TrimSuffix(strings.ToLower(sni), "."), consumed, nil
	}
}

// reader is a bounds-checked cursor over a handshake message.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) bytes(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) u8() int {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return int(b[0])
}

func (r *reader) u16() int {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(b))
}

// helloServerName returns the host_name of a ClientHello body's server_name extension ("" when
// there is none).
func helloServerName(body []byte) (string, error) {
	r := &reader{b: body}
	r.bytes(2 + 32) // legacy_version, random
	if n := r.u8(); n > 32 {
		return "", errors.New("session id longer than 32 bytes")
	} else {
		r.bytes(n)
	}
	if n := r.u16(); n < 2 || n%2 != 0 {
		return "", errors.New("bad cipher suite list")
	} else {
		r.bytes(n)
	}
	if n := r.u8(); n < 1 {
		return "", errors.New("no compression methods")
	} else {
		r.bytes(n)
	}
	if r.bad {
		return "", errors.New("truncated")
	}
	if len(r.b) == 0 {
		return "", nil // no extensions at all
	}
	n := r.u16()
	if r.bad || n != len(r.b) {
		return "", errors.New("extensions length does not match the message")
	}
	seen := map[int]bool{}
	var name string
	for len(r.b) > 0 {
		typ, l := r.u16(), r.u16()
		data := r.bytes(l)
		if r.bad {
			return "", errors.New("truncated extension")
		}
		if seen[typ] {
			return "", fmt.Errorf("extension %d twice", typ)
		}
		seen[typ] = true
		if typ != extServerName {
			continue
		}
		e := &reader{b: data}
		ln := e.u16()
		if e.bad || ln != len(e.b) || ln == 0 {
			return "", errors.New("bad server_name list")
		}
		for len(e.b) > 0 {
			nt, nl := e.u8(), e.u16()
			v := e.bytes(nl)
			if e.bad || nl == 0 {
				return "", errors.New("bad server_name entry")
			}
			if nt != 0 {
				continue
			}
			if name != "" {
				return "", errors.New("two host names in server_name")
			}
			name = string(v)
		}
	}
	return name, nil
}

// tlsAlertAccessDenied is a fatal access_denied alert (RFC 8446 §6.2) in a TLS 1.2-framed
// record: what a client that sent a ClientHello is told when the tunnel is refused after its
// 200, so it reports "access denied" rather than a bare closed connection.
var tlsAlertAccessDenied = []byte{recordAlert, 3, 3, 0, 2, 2, 49}
