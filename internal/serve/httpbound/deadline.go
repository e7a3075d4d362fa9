package httpbound

import (
	"io"
	"net/http"
	"time"
)

// CloseRefused makes a refused request's connection close once the answer is out, reading
// what is left of its body for drain at most: net/http would otherwise read up to 256 KiB of
// it, as slowly as the client sends it, before closing (and, without Connection: close,
// before even answering). Call it before writing the answer.
func CloseRefused(w http.ResponseWriter, drain time.Duration) {
	if mutated("http-refused-close") {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(drain))
}

// BodyDeadline gives r's body d to arrive (a slow drip is cut), and lifts the deadline once
// the body is read, so the rest of a long call (its answer streamed back) is not cut. While the
// body is coming its connection is one that, with every connection place taken, goes first, the
// longest waiting first (Conns.admit).
func BodyDeadline(w http.ResponseWriter, r *http.Request, d time.Duration) io.ReadCloser {
	t, _ := r.Context().Value(connKey{}).(*Conn)
	if t != nil {
		t.bodyFrom.Store(t.owner.now().UnixNano())
	}
	if mutated("http-body-deadline") {
		return &deadlinedBody{ReadCloser: r.Body, conn: t}
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return &deadlinedBody{ReadCloser: r.Body, conn: t}
	}
	return &deadlinedBody{ReadCloser: r.Body, rc: rc, conn: t}
}

type deadlinedBody struct {
	io.ReadCloser
	rc   *http.ResponseController // nil: no deadline to lift
	conn *Conn                    // nil outside Conns
	done bool
}

func (b *deadlinedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		if b.conn != nil {
			b.conn.bodyFrom.Store(0)
		}
		if b.rc != nil {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}
