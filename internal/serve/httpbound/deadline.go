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

// BodyDeadline gives a request body d to arrive (a slow drip is cut), and lifts the deadline
// once the body is read, so the rest of a long call (its answer streamed back) is not cut.
func BodyDeadline(w http.ResponseWriter, body io.ReadCloser, d time.Duration) io.ReadCloser {
	if mutated("http-body-deadline") {
		return body
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return body
	}
	return &deadlinedBody{ReadCloser: body, rc: rc}
}

type deadlinedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlinedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
