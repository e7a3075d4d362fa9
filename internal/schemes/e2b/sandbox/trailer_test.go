package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// TestCommandEndWithoutTrailer: envd sends the command's end event (exit status 3) and then
// neither the end-of-stream frame nor the end of the body (a proxy that keeps the response
// open, a broken envd). The command has ended; the call must say so promptly, not wait out its
// timeout and report a timeout with exit status -1 (which also cost a session its sandbox).
func TestCommandEndWithoutTrailer(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	frame := func(v any) []byte {
		b, _ := json.Marshal(v)
		h := make([]byte, 5, 5+len(b))
		binary.BigEndian.PutUint32(h[1:], uint32(len(b)))
		return append(h, b...)
	}
	e.fake.SetFault(&e2bfake.Fault{Scope: "envd", Times: 1, Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/connect+json")
		w.WriteHeader(http.StatusOK)
		w.Write(frame(map[string]any{"event": map[string]any{"start": map[string]any{"pid": 7}}}))
		w.Write(frame(map[string]any{"event": map[string]any{"data": map[string]any{"stdout": []byte("done\n")}}}))
		w.Write(frame(map[string]any{"event": map[string]any{"end": map[string]any{"exitCode": 3, "exited": true, "status": "exit status 3"}}}))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // no trailer, no end of body
	}})
	start := time.Now()
	r, err := e.run("run_command", "s", 20*time.Second, 1<<16, map[string]any{"command": "echo done; exit 3"})
	took := time.Since(start)
	if err != nil || r.TimedOut || r.ExitCode != 3 || r.Stdout != "done\n" {
		t.Fatalf("after %s: want exit 3 with its output, not a timeout: %+v %v", took.Round(time.Millisecond), r, err)
	}
	if took > 10*time.Second {
		t.Fatalf("the call waited %s for a trailer after the command's end", took.Round(time.Millisecond))
	}
	e.ex.EndSession("s")
	e.noLeaks()
}
