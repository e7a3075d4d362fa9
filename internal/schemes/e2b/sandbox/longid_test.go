package sandbox

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCreateAnswerIDShapeSparesOtherSessions: the sandbox id of a create answer goes, one line
// each, to the undertaker (the process that kills serve's sandboxes when serve dies), which
// reads lines of at most 64 KiB. An id longer than that (or one holding a newline: "+ID" and a
// forged "-OTHER") ended the undertaker's reading as if serve had died: it killed every sandbox
// serve held, other sessions' included, while serve ran on. Such an answer is refused.
func TestCreateAnswerIDShapeSparesOtherSessions(t *testing.T) {
	f := newFake(t)
	var (
		mu    sync.Mutex
		count int
	)
	api := createAnswers(t, f, func(code int, body []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		if count++; count == 1 || code/100 != 2 {
			return body
		}
		i := bytes.Index(body, []byte(`"sandboxID":"`)) + len(`"sandboxID":"`)
		id := string(body[i : i+bytes.IndexByte(body[i:], '"')])
		f.Kill(id)
		return bytes.Replace(body, []byte(id), []byte(id+strings.Repeat("x", 70<<10)), 1)
	})
	defer api.Close()
	e := envOn(t, f, testPolicy("session"), map[string]string{"E2B_API_URL": api.URL})
	if r, err := e.run("run_command", "A", 30*time.Second, 1<<16, map[string]any{"command": "echo kept > a.txt; echo ok"}); err != nil || r.Stdout != "ok\n" {
		t.Fatalf("session A: %+v %v", r, err)
	}
	r, err := e.run("run_command", "B", 30*time.Second, 1<<16, map[string]any{"command": "echo b"})
	if err == nil {
		t.Errorf("a create answer with a 70 KiB sandbox id was taken: %+v", r)
	} else if !strings.Contains(err.Error(), "sandboxID") {
		t.Errorf("the error does not say what was wrong with the answer: %.300s", err)
	}
	time.Sleep(time.Second) // the undertaker's kills, if any, are quick
	if r, err := e.run("run_command", "A", 30*time.Second, 1<<16, map[string]any{"command": "cat a.txt"}); err != nil || r.Stdout != "kept\n" {
		t.Fatalf("session A's sandbox after session B's create answer: %+v %v", r, err)
	}
	e.ex.EndSession("A")
	e.ex.EndSession("B")
	e.noLeaks()
}
