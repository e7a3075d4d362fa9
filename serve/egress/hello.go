package egress

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"time"
)

// maxHello bounds the bytes read while waiting for a complete ClientHello.
const maxHello = 64 << 10

var errHelloRead = errors.New("client hello read")

// readClientHello reads a TLS ClientHello from r with crypto/tls itself (a handshake on a
// read-only connection, stopped in GetConfigForClient), so fragmented or unusual hellos parse
// exactly as a Go server would parse them. It returns the server name (lower-case, no trailing
// dot) and every byte it consumed, to be forwarded upstream unchanged.
func readClientHello(r io.Reader) (string, []byte, error) {
	var buf bytes.Buffer
	var sni string
	seen := false
	conn := &helloConn{r: io.TeeReader(io.LimitReader(r, maxHello), &buf)}
	err := tls.Server(conn, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			sni, seen = h.ServerName, true
			return nil, errHelloRead
		},
	}).Handshake()
	if !seen {
		if err == nil {
			err = errors.New("no ClientHello")
		}
		return "", buf.Bytes(), err
	}
	return strings.TrimSuffix(strings.ToLower(sni), "."), buf.Bytes(), nil
}

// helloConn is a read-only net.Conn: writes (the handshake's alert) go nowhere.
type helloConn struct{ r io.Reader }

func (c *helloConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *helloConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c *helloConn) Close() error                     { return nil }
func (c *helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *helloConn) SetDeadline(time.Time) error      { return nil }
func (c *helloConn) SetReadDeadline(time.Time) error  { return nil }
func (c *helloConn) SetWriteDeadline(time.Time) error { return nil }
