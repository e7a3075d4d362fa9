package sandbox

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// TestCreateAnswerNamingALiveSandbox: an E2B API that answers a create with the id of a sandbox
// serve already holds for another session (a broken or hostile upstream) is refused: the second
// session's call gets an error that says so, never the first session's sandbox (its files, its
// variables), and the first session's sandbox is not killed by the second's end.
func TestCreateAnswerNamingALiveSandbox(t *testing.T) {
	f := newFake(t)
	var (
		mu    sync.Mutex
		first []byte // the first create's answer, replayed for every later create
	)
	api := createAnswers(t, f, func(code int, body []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = body
		} else if code/100 == 2 {
			// The sandbox really created is not handed out: kill it at the fake, answer with
			// the first one's id and token.
			if i := bytes.Index(body, []byte(`"sandboxID":"`)); i >= 0 {
				id := body[i+len(`"sandboxID":"`):]
				f.Kill(string(id[:bytes.IndexByte(id, '"')]))
			}
			body = first
		}
		return body
	})
	defer api.Close()
	e := envOn(t, f, testPolicy("session"), map[string]string{"E2B_API_URL": api.URL})

	if r, err := e.run("run_command", "A", 30*time.Second, 1<<16, map[string]any{"command": "echo secret-of-a > a.txt; echo done"}); err != nil || r.Stdout != "done\n" {
		t.Fatalf("session A: %+v %v", r, err)
	}
	r, err := e.run("run_command", "B", 30*time.Second, 1<<16, map[string]any{"command": "cat a.txt"})
	if err == nil {
		t.Fatalf("session B was given session A's sandbox (the API named it again) and ran in it: %+v", r)
	}
	if !strings.Contains(err.Error(), "already") || !strings.Contains(err.Error(), "e2b.api_url") {
		t.Fatalf("the error does not say the API named a sandbox serve already holds, nor what to check: %v", err)
	}
	t.Logf("session B: %v", err)
	e.ex.EndSession("B")
	if r, err := e.run("run_command", "A", 30*time.Second, 1<<16, map[string]any{"command": "cat a.txt"}); err != nil || r.Stdout != "secret-of-a\n" {
		t.Fatalf("session A's sandbox after session B's refused create and end: %+v %v", r, err)
	}
	e.ex.EndSession("A")
	e.noLeaks()
}

// createAnswers is an E2B API in front of the fake f whose answers to creates are rewritten by
// rewrite (given the fake's status and body); every other request passes through.
func createAnswers(t *testing.T, f *e2bfake.Server, rewrite func(code int, body []byte) []byte) *httptest.Server {
	t.Helper()
	target, _ := url.Parse(f.URL())
	rp := httputil.NewSingleHostReverseProxy(target)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/sandboxes" {
			rp.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		body := rewrite(rec.Code, rec.Body.Bytes())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body)
	}))
}
