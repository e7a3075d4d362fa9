package generate

import (
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/visible"
)

// Bounds of what init prints that came from a server or a client's config.
const (
	maxShownEntry  = 2 << 10 // an entry's command line
	maxShownStderr = 2 << 10 // a failing server's stderr tail (tail keeps as much)
	maxShownError  = 8 << 10 // an error that may quote a server's answer
)

// shown is text init prints that came from a server (its stderr, its answers, its tool names)
// or a client's config (an entry's command and args), as init prints it: clipped to max bytes,
// saying how many were cut, and with its terminal controls shown, not done (visible.Text of its
// valid UTF-8; visible.Lines: U+2028 and bidi overrides shown too). init runs in a terminal and the server it starts for a proof may be the very one
// being put under wrap because it is not trusted: an OSC 52 in its stderr wrote the user's
// clipboard, ESC[2J cleared init's refusal off the screen (atk36 F5b).
func shown(s string, max int) string {
	if mutated("init-server-text-raw") {
		return s
	}
	cut := 0
	if len(s) > max {
		s, cut = s[:max], len(s)-max
	}
	s = visible.Lines(strings.ToValidUTF8(s, "\uFFFD"))
	if cut > 0 {
		s += fmt.Sprintf("… (%d bytes cut)", cut)
	}
	return s
}

// ToolList is the probe's tool names as init prints them (the server's words: shown).
func (p Probe) ToolList() string { return shown(strings.Join(p.Tools, ", "), maxShownEntry) }

// Shown is shown for a name or a note init prints beside an entry (a client's config's words).
func Shown(s string) string { return shown(s, maxShownEntry) }
