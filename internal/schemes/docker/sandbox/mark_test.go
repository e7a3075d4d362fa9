package sandbox

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

func TestMarkWriter(t *testing.T) {
	nonce := strings.Repeat("ab", 16)
	mark := markPrefix + nonce + ":3:1\n"
	for _, tc := range []struct {
		name   string
		chunks []string
		out    string
		found  bool
		status int
		oom    int
	}{
		{"whole", []string{"hello\n" + mark + "after"}, "hello\n", true, 3, 1},
		{"no newline before mark", []string{"hello" + mark}, "hello", true, 3, 1},
		{"split everywhere", strings.Split("x"+mark, ""), "x", true, 3, 1},
		{"split in token", []string{"ab" + mark[:10], mark[10:]}, "ab", true, 3, 1},
		{"other nonce is output", []string{markPrefix + strings.Repeat("cd", 16) + ":0:0\nz" + mark}, markPrefix + strings.Repeat("cd", 16) + ":0:0\nz", true, 3, 1},
		{"malformed tail is output", []string{markPrefix + nonce + ":x:y\nrest" + mark}, markPrefix + nonce + ":x:y\nrest", true, 3, 1},
		{"no mark", []string{"plain ", "output", " mcpsandbox-e"}, "plain output mcpsandbox-e", false, 0, 0},
		{"token without newline is flushed at EOF", []string{"a" + markPrefix + nonce + ":1"}, "a" + markPrefix + nonce + ":1", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf := &executor.CapBuffer{Limit: 1 << 20}
			fired := 0
			m := newMarkWriter(buf, nonce, func() { fired++ })
			for _, c := range tc.chunks {
				if n, err := m.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			m.flush()
			found, st, oom := m.result()
			if buf.String() != tc.out || found != tc.found || st != tc.status || oom != tc.oom || fired != map[bool]int{true: 1}[tc.found] {
				t.Errorf("got %q found=%v status=%d oom=%d fired=%d; want %q %v %d %d", buf.String(), found, st, oom, fired, tc.out, tc.found, tc.status, tc.oom)
			}
		})
	}
}

// A forged token followed by a flood without newline is passed on as output, never held:
// serve's memory stays bounded whatever the program writes.
func TestMarkWriterHoldsLittle(t *testing.T) {
	nonce := strings.Repeat("ef", 16)
	buf := &executor.CapBuffer{Limit: 1 << 30}
	m := newMarkWriter(buf, nonce, nil)
	m.Write([]byte(markPrefix + nonce + ":"))
	chunk := []byte(strings.Repeat("9", 32<<10))
	for range 64 {
		m.Write(chunk)
		if len(m.held) > len(m.token)+maxMarkTail {
			t.Fatalf("held %d bytes", len(m.held))
		}
	}
	if found, _, _ := m.result(); found {
		t.Fatal("a mark without its newline was accepted")
	}
	if got := len(buf.String()); got < 64*len(chunk) {
		t.Errorf("output %d bytes, want all of %d passed on", got, 64*len(chunk))
	}
}
