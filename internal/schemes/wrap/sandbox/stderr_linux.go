package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
)

// The wrapped server's stderr is a pipe wrap reads, never wrap's own descriptor: when that is a
// terminal (wrap run by hand, the MCP Inspector CLI, a client on the TypeScript SDK's default
// stderr "inherit"), a server holding it could type into it (TIOCSTI: the user's shell runs
// what it typed, outside the sandbox) and write raw terminal controls (OSC 52 writes the
// clipboard) (atk36 F5). Each line the server writes reaches wrap's stderr marked as its own
// (serverLinePrefix), clipped, with its terminal controls and every rune that is not printable
// shown (visible.Line: U+2028 ends a line in many log readers, atk36b F3), at most
// bounds.MaxLogLines in a bounds.LogWindow.

// serverLinePrefix marks a line of the server's stderr in wrap's (beside wrap's own log lines,
// which the server cannot forge).
const serverLinePrefix = "server: "

// stderrRelay relays the server's stderr pipe to wrap's stderr.
type stderrRelay struct {
	w    *os.File // the server's end (its fd 2); closed once the server holds it
	done chan struct{}
	seen stderrSeen
}

// stderrSeen is what the server's stderr said that wrap's failure hint answers: an npm cache
// miss (the npm cache hint is for that alone), and the absolute paths node could not find (the
// sandbox hides them: the hint names them and the read = [...] that shows them). trial48 F3: every
// server that ended with no network got the npm advice, a node script's hidden import none.
type stderrSeen struct {
	mu       sync.Mutex
	npmMiss  bool
	notFound []string
	// denied: the server's last lines that say the kernel refused something (maxDenied at
	// most), for --explain-denials: a server whose answer says only "Permission denied" often
	// names the path on its stderr (trial49 F4). take empties it.
	denied []string
}

// maxDenied bounds the refusal lines kept between two failed calls.
const maxDenied = 8

// nodeNotFound is node's "Cannot find module '/abs/path'" (CommonJS, and ESM's
// ERR_MODULE_NOT_FOUND, "… imported from …").
var nodeNotFound = regexp.MustCompile(`Cannot find (?:module|package) '(/[^']+)'`)

// maxNotFound bounds the paths kept: a hint names a few.
const maxNotFound = 4

// scan notes what line says (nil s: nothing is kept).
func (s *stderrSeen) scan(line string) {
	if s == nil {
		return
	}
	miss := strings.Contains(line, "ENOTCACHED") || strings.Contains(line, "only-if-cached")
	m := nodeNotFound.FindStringSubmatch(line)
	denied := slices.ContainsFunc(deniedMarks, func(mark string) bool { return strings.Contains(line, mark) })
	if !miss && m == nil && !denied {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if denied {
		s.denied = append(s.denied, line)
		if len(s.denied) > maxDenied {
			s.denied = s.denied[len(s.denied)-maxDenied:]
		}
	}
	s.npmMiss = s.npmMiss || miss
	if m != nil && len(s.notFound) < maxNotFound && !slices.Contains(s.notFound, m[1]) {
		s.notFound = append(s.notFound, m[1])
	}
}

// get is what was seen so far.
func (s *stderrSeen) get() (npmMiss bool, notFound []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.npmMiss, slices.Clone(s.notFound)
}

// take returns the refusal lines seen since the last take, and forgets them.
func (s *stderrSeen) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.denied
	s.denied = nil
	return d
}

// startStderrRelay makes the server's stderr pipe and starts relaying it to out.
func startStderrRelay(out io.Writer) (*stderrRelay, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("the server's stderr: %w", err)
	}
	s := &stderrRelay{w: w, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer r.Close()
		relayServerStderr(r, out, time.Now, &s.seen)
	}()
	return s, nil
}

// started closes wrap's copy of the server's end: the pipe ends when the server's tree does.
func (s *stderrRelay) started() { s.w.Close() }

// wait waits, at most d, for the server's last lines to be relayed (its tree is dead, so its
// end of the pipe is closed; a process that left the tree and kept it open is not waited for).
func (s *stderrRelay) wait(d time.Duration) {
	s.w.Close()
	select {
	case <-s.done:
	case <-time.After(d):
	}
}

// relayServerStderr copies r's lines to out, each with serverLinePrefix, clipped to
// bounds.MaxLogValue bytes, shown (visible.Line of its valid UTF-8), at most bounds.MaxLogLines
// in a bounds.LogWindow (the rest dropped and counted, said before the next line that passes).
// It reads r to its end whatever out does, so the server never blocks on its stderr.
func relayServerStderr(r io.Reader, out io.Writer, now func() time.Time, seen *stderrSeen) {
	br := bufio.NewReaderSize(r, 4096)
	var (
		line          []byte
		cut           int // bytes of the line past bounds.MaxLogValue
		start         time.Time
		n, dropped    int // lines of this window relayed, dropped
		partial, last bool
	)
	emit := func() {
		defer func() { line, cut = line[:0], 0 }()
		t := now()
		if t.Sub(start) >= bounds.LogWindow {
			if dropped > 0 {
				writeLine(out, fmt.Sprintf("mcpsandbox: %d lines of the server's stderr dropped: more than %d in %s", dropped, bounds.MaxLogLines, bounds.LogWindow))
			}
			start, n, dropped = t, 0, 0
		}
		if n >= bounds.MaxLogLines {
			dropped++
			return
		}
		s := strings.TrimSuffix(string(line), "\r")
		seen.scan(s) // a dropped line is not seen: a flood's lines are not the server's last words
		n++
		if mutated("wrap-stderr-controls") {
			writeLine(out, serverLinePrefix+s)
			return
		}
		s = visible.Line(strings.ToValidUTF8(s, "\uFFFD"))
		if cut > 0 {
			s += fmt.Sprintf(" [%d bytes cut]", cut)
		}
		writeLine(out, serverLinePrefix+s)
	}
	for !last {
		chunk, err := br.ReadSlice('\n')
		partial = errors.Is(err, bufio.ErrBufferFull)
		last = err != nil && !partial
		chunk = trimNewline(chunk)
		if room := bounds.MaxLogValue - len(line); room > 0 {
			k := min(room, len(chunk))
			line = append(line, chunk[:k]...)
			cut += len(chunk) - k
		} else {
			cut += len(chunk)
		}
		if partial {
			continue
		}
		if err == nil || len(line) > 0 || cut > 0 {
			emit()
		}
	}
	if dropped > 0 {
		writeLine(out, fmt.Sprintf("mcpsandbox: %d lines of the server's stderr dropped: more than %d in %s", dropped, bounds.MaxLogLines, bounds.LogWindow))
	}
}

func trimNewline(b []byte) []byte {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return b[:len(b)-1]
	}
	return b
}

// writeLine writes one line to out in one Write (wrap's logger writes its records whole too).
func writeLine(out io.Writer, s string) {
	_, _ = io.WriteString(out, s+"\n")
}
