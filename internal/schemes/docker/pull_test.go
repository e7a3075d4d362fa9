package docker

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
)

// No registry is reachable here, so the engine's pull stream comes from a stand-in speaking the
// engine API's /_ping and /images/create progress format over a unix socket, as the engine does.
func TestPullImageProgress(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var paths []string
	var query []string
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		if strings.HasSuffix(r.URL.Path, "/_ping") {
			w.Write([]byte("OK"))
			return
		}
		mu.Lock()
		paths = append(paths, r.URL.Path)
		query = append(query, r.URL.Query().Get("fromImage")+" "+r.URL.Query().Get("tag"))
		mu.Unlock()
		if strings.HasSuffix(r.URL.Query().Get("fromImage"), "/missing") {
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
	if err := pullImage(context.Background(), verify.DockerClient(sock, 0), "python:3.12-slim", &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[#######", " 30% 1.5/5.0 MB (2 layers)", "100% 5.0/5.0 MB", "pulled python:3.12-slim"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("progress lacks %q: %q", want, out.String())
		}
	}
	if err := pullImage(context.Background(), verify.DockerClient(sock, 0), "missing", &out); err == nil || !strings.Contains(err.Error(), "pull access denied") {
		t.Errorf("engine error not reported: %v", err)
	}
	// A digest reference: the old hand-written split cut at the last ':' and sent
	// fromImage=img@sha256 tag=<hex>; the registry's reference package sends the digest as the tag.
	dig := "sha256:" + strings.Repeat("ab", 32)
	if err := pullImage(context.Background(), verify.DockerClient(sock, 0), "localhost:5000/team/img@"+dig, &out); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"docker.io/library/python 3.12-slim", "docker.io/library/missing latest", "localhost:5000/team/img " + dig}
	if strings.Join(query, "|") != strings.Join(want, "|") {
		t.Errorf("requests %q, want %q", query, want)
	}
	// The API version was negotiated down to what the engine speaks.
	if len(paths) == 0 || paths[0] != "/v1.41/images/create" {
		t.Errorf("paths %q, want /v1.41/images/create", paths)
	}
}
