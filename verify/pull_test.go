package verify

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// No registry is reachable here, so the engine's pull stream comes from a stand-in speaking the
// engine API's /images/create progress format over a unix socket, as the engine does.
func TestPullImageProgress(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var got string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.Path + "?" + r.URL.RawQuery
		if r.URL.Query().Get("fromImage") == "missing" {
			w.Write([]byte(`{"error":"pull access denied for missing"}` + "\n"))
			return
		}
		for _, l := range []string{
			`{"status":"Pulling from library/python","id":"3.12-slim"}`,
			`{"status":"Downloading","progressDetail":{"current":1000000,"total":4000000},"id":"a"}`,
			`{"status":"Downloading","progressDetail":{"current":500000,"total":1000000},"id":"b"}`,
			`{"status":"Download complete","id":"a"}`,
			`{"status":"Pull complete","id":"b"}`,
			`{"status":"Status: Downloaded newer image for python:3.12-slim"}`,
		} {
			w.Write([]byte(l + "\n"))
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	var out strings.Builder
	if err := PullImage(context.Background(), DockerClient(sock, 0), "python:3.12-slim", &out); err != nil {
		t.Fatal(err)
	}
	if got != "/images/create?fromImage=python&tag=3.12-slim" {
		t.Errorf("request %s", got)
	}
	for _, want := range []string{"[#######", " 30% 1.5/5.0 MB (2 layers)", "100% 5.0/5.0 MB", "pulled python:3.12-slim"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress lacks %q: %q", want, out.String())
		}
	}
	if err := PullImage(context.Background(), DockerClient(sock, 0), "missing", &out); err == nil || !strings.Contains(err.Error(), "pull access denied") {
		t.Errorf("engine error not reported: %v", err)
	}
}
