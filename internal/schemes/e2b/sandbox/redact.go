package sandbox

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// redacted replaces the API key wherever an upstream string could carry it.
const redacted = "[redacted]"

// minPartial is the shortest key prefix a cut-off text may end with before the prefix is
// redacted too: a text cut mid-key (a read limit, a stream the deadline ended) must not show the
// key's start. Shorter tails ("e2b_" is every key's public prefix) stay, so ordinary text ending
// in a few letters a key also starts with is not mangled.
const minPartial = 6

// redactKey replaces every whole occurrence of key in s. cut says s was cut off at its end
// (a read limit, a broken stream): a tail that is the start of the key is redacted as well.
func redactKey(s, key string, cut bool) string {
	if key == "" {
		return s
	}
	s = strings.ReplaceAll(s, key, redacted)
	if cut {
		if n := partialTail(s, key); n >= minPartial {
			s = s[:len(s)-n] + redacted
		}
	}
	return s
}

// partialTail is the length of the longest suffix of s that is a proper prefix of key.
func partialTail(s, key string) int {
	for n := min(len(key)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, key[:n]) {
			return n
		}
	}
	return 0
}

// clip cuts s to at most n bytes, at a rune boundary; it reports whether it cut.
func clip(s string, n int) (string, bool) {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// redactWriter removes the key from a stream before it reaches w (which may cap it): a key split
// across two writes (two output events) is still caught, because the last len(key)-1 bytes of a
// write are held back until the next one shows whether they start the key. It holds at most
// len(key)-1 bytes. Flush passes on what is held at the stream's end.
type redactWriter struct {
	w    io.Writer
	key  []byte
	hold []byte
}

func newRedactWriter(w io.Writer, key string) *redactWriter {
	return &redactWriter{w: w, key: []byte(key)}
}

func (r *redactWriter) Write(p []byte) (int, error) {
	if len(r.key) == 0 || mutated("e2b-redact") {
		return r.w.Write(p)
	}
	buf := append(r.hold, p...)
	r.hold = nil
	for {
		i := bytes.Index(buf, r.key)
		if i < 0 {
			break
		}
		if _, err := r.w.Write(buf[:i]); err != nil {
			return len(p), err
		}
		if _, err := io.WriteString(r.w, redacted); err != nil {
			return len(p), err
		}
		buf = buf[i+len(r.key):]
	}
	// No whole key is left in buf: one can only start in its last len(key)-1 bytes.
	keep := min(len(r.key)-1, len(buf))
	if _, err := r.w.Write(buf[:len(buf)-keep]); err != nil {
		return len(p), err
	}
	r.hold = append([]byte(nil), buf[len(buf)-keep:]...)
	return len(p), nil
}

// Flush writes what is held, at the stream's end. The stream may have broken off mid-key (a
// deadline, a broken connection), so a held start of the key is redacted rather than shown.
func (r *redactWriter) Flush() {
	if len(r.hold) == 0 {
		return
	}
	s := string(r.hold)
	r.hold = nil
	if !mutated("e2b-redact") {
		s = redactKey(s, string(r.key), true)
	}
	io.WriteString(r.w, s)
}
