package sandbox

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCreateAnswerDomainIsAHostName: the create answer's domain becomes part of the sandbox's
// address (https://PORT-ID.DOMAIN), like its id, which is checked for "/?#@: ". A domain such
// as "x@127.0.0.1:9" made it https://49983-ID.x@127.0.0.1:9: the sandbox's requests (its access
// token, the command) went to a host and port the answer chose, here this machine's loopback.
// The answer is refused, saying why; no request leaves for such an address.
func TestCreateAnswerDomainIsAHostName(t *testing.T) {
	f := newFake(t)
	target, _ := url.Parse(f.URL())
	api := createAnswers(t, f, func(_ int, body []byte) []byte {
		return bytes.Replace(body, []byte(`"domain":null`), []byte(`"domain":"x@127.0.0.1:9"`), 1)
	})
	defer api.Close()
	apiURL, _ := url.Parse(api.URL)
	var (
		mu    sync.Mutex
		hosts []string // where the sandbox's requests were addressed
	)
	hc := &http.Client{Transport: rtFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host != apiURL.Host {
			mu.Lock()
			hosts = append(hosts, r.URL.Host)
			mu.Unlock()
			r = r.Clone(r.Context())
			r.URL.Scheme, r.URL.Host, r.URL.User, r.Host = "http", target.Host, nil, ""
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	e := &env{t: t, fake: f, logs: &syncBuf{}}
	vars := map[string]string{keyEnv: testKey, "E2B_API_URL": api.URL}
	ex, err := New(testPolicy("call"), Options{Getenv: func(k string) string { return vars[k] }, HTTP: hc, Retries: 1,
		Backoff: 5 * time.Millisecond, RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	<-ex.Reaped()
	e.ex = ex
	r, err := e.run("run_command", "s", 20*time.Second, 1<<16, map[string]any{"command": "echo ran"})
	mu.Lock()
	sent := append([]string(nil), hosts...)
	mu.Unlock()
	if len(sent) > 0 {
		t.Fatalf("the sandbox's requests went to %v, an address the create answer's domain chose (result %+v, err %v)", sent, r, err)
	}
	if err == nil || !strings.Contains(err.Error(), "domain") {
		t.Fatalf("want an error naming the answer's domain, got %+v %v", r, err)
	}
	t.Logf("refused: %v", err)
	e.noLeaks()
}
