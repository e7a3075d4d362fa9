package shellword

import (
	"os/exec"
	"runtime"
	"testing"
)

// Every quoted word reads back through a real shell as the one argument it was.
func TestQuoteRoundTripsThroughSh(t *testing.T) {
	words := []string{"/home/me/ws", "/home/me/my ws", "it's", "a\"b", "$HOME", "`id`", "a;b", "*", "~", "", "tab\there", "new\nline", "-x"}
	for _, w := range words {
		if w == "/home/me/ws" && Quote(w) != w {
			t.Errorf("a plain path is quoted: %q", Quote(w))
		}
	}
	if runtime.GOOS == "windows" {
		t.Skip("no POSIX shell")
	}
	for _, w := range words {
		out, err := exec.Command("/bin/sh", "-c", "printf %s "+Quote(w)).Output()
		if err != nil || string(out) != w {
			t.Errorf("Quote(%q) = %s: the shell read %q (%v)", w, Quote(w), out, err)
		}
	}
}
