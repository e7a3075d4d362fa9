package sandbox

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// TestReapKillsOnlyItsOwn: the start-up sweep asks the API for the sandboxes labelled by serves
// of this host, but an API that ignores the metadata filter (a self-hosted E2B-protocol server
// of another version, a proxy that drops the query) answers with every sandbox of the team.
// The sweep must kill only sandboxes whose labels say a serve of this host made them: not the
// user's other sandboxes (another tool's, another host's serve's).
func TestReapKillsOnlyItsOwn(t *testing.T) {
	f := newFake(t)
	c := NewClient(Config{APIKey: testKey, APIURL: f.URL(), SandboxURL: f.URL()})
	mk := func(md map[string]string) string {
		sb, err := c.Create(context.Background(), CreateOptions{Template: "base", Timeout: time.Minute, Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		return sb.ID
	}
	host, _ := os.Hostname()
	foreign := mk(map[string]string{"owner": "another-tool"})
	otherHost := mk(map[string]string{LabelOwner: "1", LabelHost: "another-host", LabelPID: "1", LabelStart: "1"})
	target, _ := url.Parse(f.URL())
	rp := httputil.NewSingleHostReverseProxy(target)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v2/sandboxes" {
			q := r.URL.Query()
			q.Del("metadata") // the filter is ignored: every running sandbox is listed
			r.URL.RawQuery = q.Encode()
		}
		rp.ServeHTTP(w, r)
	}))
	defer api.Close()
	vars := map[string]string{keyEnv: testKey, "E2B_API_URL": api.URL, "E2B_SANDBOX_URL": f.URL()}
	logs := &syncBuf{}
	left := sweep(t, f, vars, slog.New(slog.NewTextHandler(logs, nil)))
	if !left[foreign] || !left[otherHost] {
		t.Fatalf("serve's start-up sweep (host %s) killed sandboxes it did not make: another tool's alive %v, another host's serve's alive %v",
			host, left[foreign], left[otherHost])
	}
	if !strings.Contains(logs.String(), "ignored its metadata filter") {
		t.Errorf("serve's log does not say the API ignored the list's filter:\n%s", logs.String())
	}
}

// sweep starts an executor with vars (and logger, if any), waits for its start-up sweep, and
// returns the fake's sandboxes still alive, by id.
func sweep(t *testing.T, f *e2bfake.Server, vars map[string]string, logger *slog.Logger) map[string]bool {
	t.Helper()
	ex, err := New(testPolicy("call"), Options{Getenv: func(k string) string { return vars[k] }, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	<-ex.Reaped()
	left := map[string]bool{}
	for _, s := range f.Live() {
		left[s.ID] = true
	}
	return left
}
