package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestServerStderrShownNotDone: the wrapped server's stderr reaches wrap's marked as the
// server's, with its terminal controls shown (OSC 52, CSI, a lone CR, an 8-bit CSI, a byte
// that is not UTF-8), a long line clipped saying how much was cut, and a flood bounded
// (atk36 F5); U+2028 and a bidi override shown (atk36b F3). Catches wrap-stderr-controls and
// log-line-unprintable.
func TestServerStderrShownNotDone(t *testing.T) {
	in := "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07\x1b[2J\x1b[Hall good\r\n" +
		"over\rwritten\n" + "csi \xc2\x9b31m and \xff\xfe bytes\n" + "ready\u2028time=x level=ERROR msg=forged\n" + "x\u202etxt.exe\n" + strings.Repeat("x", 10000) + "\n" + "last words"
	var out bytes.Buffer
	relayServerStderr(strings.NewReader(in), &out, time.Now, nil)
	got := out.String()
	for _, bad := range []string{"\x1b", "\x07", "\r", "\xc2\x9b", "\xff"} {
		if strings.Contains(got, bad) {
			t.Errorf("the server's stderr reached wrap's with %q as it was:\n%q", bad, got)
		}
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	want := []string{
		serverLinePrefix + "␛]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==␇␛[2J␛[Hall good",
		serverLinePrefix + "over␍written",
		serverLinePrefix + "csi ␛[31m and \uFFFD bytes",
		serverLinePrefix + `ready\u2028time=x level=ERROR msg=forged`, // U+2028 ends a line in many log readers (atk36b F3)
		serverLinePrefix + `x\u202etxt.exe`,
		serverLinePrefix + strings.Repeat("x", bounds.MaxLogValue) + fmt.Sprintf(" [%d bytes cut]", 10000-bounds.MaxLogValue),
		serverLinePrefix + "last words",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%q", len(lines), len(want), got)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d: %q, want %q", i, lines[i], want[i])
		}
	}

	// a flood: at most MaxLogLines a window, the rest counted
	now := time.Unix(1000, 0)
	out.Reset()
	relayServerStderr(strings.NewReader(strings.Repeat("spam\n", 5000)), &out, func() time.Time { return now }, nil)
	if n := strings.Count(out.String(), serverLinePrefix); n != bounds.MaxLogLines {
		t.Errorf("%d of 5000 lines relayed in one window, want %d", n, bounds.MaxLogLines)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("%d lines of the server's stderr dropped", 5000-bounds.MaxLogLines)) {
		t.Errorf("the dropped lines are not counted:\n%s", out.String()[len(out.String())-200:])
	}
}

// When a failed call's answer names no path ("PermissionError(13, 'Permission denied')") but the
// server's stderr, relayed just before, names one in a wrap.write directory its uid cannot
// write, --explain-denials says so with the fix, not "a path outside wrap.read/wrap.write"
// (trial49 F4). Red with mutant wrap-explain-stderr-unread.
func TestRelayExplainReadsTheServersStderr(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		os.Chmod(dir, 0o755)
	} else {
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
	}
	p := policy.Default(wrapsec.Name)
	wrapsec.Of(p).Write = []string{dir}
	toClient, toServer, stderr := &syncBuf{}, &syncBuf{}, &syncBuf{}
	r := newRelay(p, nil, Options{Stdout: toClient, Stderr: stderr, ExplainDenials: true, Logger: slog.New(slog.DiscardHandler)}, "s", toServer)
	var seen stderrSeen
	seen.scan("error: [Errno 13] Permission denied: '/elsewhere/old.txt'")
	seen.scan("error: [Errno 13] Permission denied: '" + dir + "/out.txt'")
	r.stderrDenied = seen.take
	r.track("1", &pending{id: json.RawMessage("1"), method: "tools/call", tool: "writefile", start: time.Now()})
	frame := `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"PermissionError(13, 'Permission denied')"}]}}`
	if err := r.fromServer(strings.NewReader(frame + "\n")); err != nil {
		t.Fatal(err)
	}
	stderr.mu.Lock()
	out := stderr.b.String()
	stderr.mu.Unlock()
	if !strings.Contains(out, "failed writing in a wrap.write directory") || !strings.Contains(out, dir+"/out.txt") ||
		!strings.Contains(out, "is in wrap.write but not") || strings.Contains(out, "a path outside wrap.read/wrap.write") {
		t.Errorf("a refusal the server's stderr places in an unwritable wrap.write directory is blamed elsewhere: %q", out)
	}
	if got := seen.take(); len(got) != 0 {
		t.Errorf("the stderr lines are kept after they were read: %q", got)
	}
}
