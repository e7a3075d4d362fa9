package sandbox

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

const markPrefix = "mcpsandbox-end:"

// maxMarkTail bounds what is held after a token while waiting for the mark's newline: a forged
// token followed by a flood without newline must not make serve buffer it.
const maxMarkTail = 48

// markWriter passes one demultiplexed stream into its capped buffer until the end mark
// "mcpsandbox-end:NONCE:STATUS:OOM\n" and drops everything from the mark on. It holds back at
// most len(token)+maxMarkTail bytes (a possible mark split across writes), never more.
type markWriter struct {
	mu     sync.Mutex
	dst    *executor.CapBuffer
	token  []byte
	held   []byte
	found  bool
	status int
	oom    int
	onMark func()
}

func newMarkWriter(dst *executor.CapBuffer, nonce string, onMark func()) *markWriter {
	return &markWriter{dst: dst, token: []byte(markPrefix + nonce + ":"), onMark: onMark}
}

func (m *markWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	n := len(p)
	if m.found {
		m.mu.Unlock()
		return n, nil
	}
	data := p
	if len(m.held) > 0 {
		data = append(m.held, p...)
		m.held = nil
	}
	fire := m.scan(data)
	m.mu.Unlock()
	if fire && m.onMark != nil {
		m.onMark()
	}
	return n, nil
}

// scan consumes data; it reports whether the mark was completed.
func (m *markWriter) scan(data []byte) bool {
	for {
		i := bytes.Index(data, m.token)
		if i < 0 {
			// Keep the longest tail that could begin the token.
			keep := 0
			for k := min(len(m.token)-1, len(data)); k > 0; k-- {
				if bytes.HasPrefix(m.token, data[len(data)-k:]) {
					keep = k
					break
				}
			}
			m.dst.Write(data[:len(data)-keep])
			m.held = append([]byte(nil), data[len(data)-keep:]...)
			return false
		}
		m.dst.Write(data[:i])
		rest := data[i+len(m.token):]
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 && len(rest) <= maxMarkTail {
			m.held = append([]byte(nil), data[i:]...)
			return false
		}
		if nl >= 0 && nl <= maxMarkTail {
			if st, oom, ok := parseMarkTail(rest[:nl]); ok {
				m.found, m.status, m.oom = true, st, oom
				return true
			}
		}
		// Not a well-formed mark: it is output. Pass the token on and scan after it.
		m.dst.Write(data[i : i+len(m.token)])
		data = rest
	}
}

func parseMarkTail(b []byte) (status, oom int, ok bool) {
	s, o, cut := bytes.Cut(b, []byte(":"))
	if !cut {
		return 0, 0, false
	}
	st, err1 := strconv.Atoi(string(s))
	om, err2 := strconv.Atoi(string(o))
	if err1 != nil || err2 != nil || st < 0 || st > 255 || om < 0 {
		return 0, 0, false
	}
	return st, om, true
}

// flush writes what is held back (the stream ended without a mark).
func (m *markWriter) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.found && len(m.held) > 0 {
		m.dst.Write(m.held)
		m.held = nil
	}
}

func (m *markWriter) result() (found bool, status, oom int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.found, m.status, m.oom
}
