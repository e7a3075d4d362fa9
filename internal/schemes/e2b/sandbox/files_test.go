package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The e2b file tools and pictures (issue 27).

func hasTool(ex *Executor, name string) bool {
	for _, t := range ex.Tools() {
		if t.Name == name {
			return true
		}
	}
	return false
}

// TestFileToolsOfferedPerSession: the file tools come with reuse = "session" and
// limits.max_file_bytes > 0 only (with reuse = "call" a written file would die with its call's
// sandbox).
func TestFileToolsOfferedPerSession(t *testing.T) {
	for _, c := range []struct {
		reuse string
		max   int64
		want  bool
	}{{"session", 4 << 20, true}, {"session", 0, false}, {"call", 4 << 20, false}} {
		p := testPolicy(c.reuse)
		p.Limits.MaxFileBytes = policy.Size(c.max)
		e := newEnv(t, p, nil)
		for _, n := range []string{executor.ToolWriteFile, executor.ToolReadFile, executor.ToolListFiles} {
			if got := hasTool(e.ex, n); got != c.want {
				t.Errorf("reuse=%s max_file_bytes=%d: tool %s offered=%v, want %v", c.reuse, c.max, n, got, c.want)
			}
		}
	}
}

// TestFileRoundTripAndCode: 1 MiB of random bytes written with write_file come back from
// read_file identical; the session's code sees the file and list_files sees what the code made.
func TestFileRoundTripAndCode(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	data := make([]byte, 1<<20)
	rand.Read(data)
	r, err := e.run("write_file", "A", 30*time.Second, 1<<16, map[string]any{"path": "in/data.bin", "content_base64": base64.StdEncoding.EncodeToString(data)})
	if err != nil || r.File == nil || r.File.Size != 1<<20 {
		t.Fatalf("write_file: %+v %v", r, err)
	}
	r, err = e.run("read_file", "A", 30*time.Second, 1<<16, map[string]any{"path": "/home/user/in/data.bin"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := base64.StdEncoding.DecodeString(r.File.ContentBase64)
	if !bytes.Equal(got, data) || r.File.Truncated || r.File.Size != 1<<20 {
		t.Fatalf("read_file: %d bytes (identical %v), size %d, truncated %v", len(got), bytes.Equal(got, data), r.File.Size, r.File.Truncated)
	}
	r, err = e.run("run_code", "A", 30*time.Second, 1<<16, map[string]any{"code": "open('made.txt','w').write('by code')\nlen(open('in/data.bin','rb').read())"})
	if err != nil || r.Stdout != "1048576\n" {
		t.Fatalf("the session's code must see the file: %+v %v", r, err)
	}
	r, err = e.run("list_files", "A", 30*time.Second, 1<<16, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, en := range r.Entries {
		kinds[en.Name] = en.Type
	}
	if kinds["in"] != "dir" || kinds["made.txt"] != "file" {
		t.Fatalf("list_files of the home: %+v", r.Entries)
	}
	r, err = e.run("read_file", "A", 30*time.Second, 1<<16, map[string]any{"path": "in/data.bin", "max_bytes": 10})
	if err != nil || !r.File.Truncated || r.File.Size != 1<<20 || r.File.ContentBase64 != base64.StdEncoding.EncodeToString(data[:10]) {
		t.Fatalf("read_file with max_bytes 10: %+v %v", r.File, err)
	}
	if _, err := e.run("read_file", "A", 30*time.Second, 1<<16, map[string]any{"path": "nope.txt"}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing file: %v", err)
	}
	if e.fake.Count() != 1 {
		t.Fatalf("the file tools and the code must share the session's one sandbox: %d live", e.fake.Count())
	}
	e.ex.EndSession("A")
	e.noLeaks()
}

// TestFilesStayInTheirSession: a second session sees none of the first's files (its own
// sandbox), in series and while the first is live.
func TestFilesStayInTheirSession(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	if _, err := e.run("write_file", "A", 30*time.Second, 1<<16, map[string]any{"path": "secret-of-a.txt", "content": "A's"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.run("read_file", "B", 30*time.Second, 1<<16, map[string]any{"path": "secret-of-a.txt"}); err == nil {
		t.Fatal("session B read session A's file")
	}
	r, err := e.run("list_files", "B", 30*time.Second, 1<<16, map[string]any{"path": "/home/user"})
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range r.Entries {
		if en.Name == "secret-of-a.txt" {
			t.Fatal("session B lists session A's file")
		}
	}
	if r, err := e.run("run_code", "B", 30*time.Second, 1<<16, map[string]any{"code": "import os\nos.path.exists('secret-of-a.txt')"}); err != nil || r.Stdout != "False\n" {
		t.Fatalf("session B's code sees session A's file: %+v %v", r, err)
	}
	if r, err := e.run("read_file", "A", 30*time.Second, 1<<16, map[string]any{"path": "secret-of-a.txt"}); err != nil || r.File.Content != "A's" {
		t.Fatalf("session A's own file: %+v %v", r, err)
	}
	if e.fake.Count() != 2 {
		t.Fatalf("two sessions, want two sandboxes: %d", e.fake.Count())
	}
	e.ex.EndSession("A")
	e.ex.EndSession("B")
	e.noLeaks()
}

// TestHostileEnvdDownloads: a download never reads past max+1 bytes whatever envd claims: a
// Content-Length of 1 TiB over a body that then breaks off, and an endless body without one,
// both give the first bytes marked truncated, promptly. Malformed answers are errors.
func TestHostileEnvdDownloads(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	const max = 64 << 10
	if _, err := e.run("write_file", "s", 30*time.Second, 1<<16, map[string]any{"path": "x", "content": "x"}); err != nil {
		t.Fatal(err) // the session's sandbox exists: what follows hits envd only
	}
	chunk := bytes.Repeat([]byte("A"), 32<<10)
	hostile := map[string]http.HandlerFunc{
		"huge Content-Length": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1099511627776")
			w.WriteHeader(http.StatusOK)
			for i := 0; i < 2*max/len(chunk); i++ {
				w.Write(chunk)
			}
			// and the body ends far short of its length
		},
		"endless body": func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/Stat") {
				fmt.Fprint(w, `{"entry":{"name":"x","type":"FILE_TYPE_FILE","path":"/home/user/x","size":"5000000000"}}`)
				return
			}
			w.WriteHeader(http.StatusOK)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		},
	}
	for name, h := range hostile {
		e.fake.SetFault(&e2bfake.Fault{Scope: "envd", Handler: h})
		start := time.Now()
		r, err := e.run("read_file", "s", 8*time.Second, 1<<16, map[string]any{"path": "x", "max_bytes": max})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !r.File.Truncated || r.File.Content != strings.Repeat("A", max) || r.File.Size <= max || time.Since(start) > 5*time.Second {
			t.Fatalf("%s: want the first %d bytes, truncated, promptly: %d bytes, size %d, truncated %v, in %s", name, max, len(r.File.Content), r.File.Size, r.File.Truncated, time.Since(start))
		}
	}
	malformed := map[string]struct {
		tool string
		h    http.HandlerFunc
	}{
		"a download longer than Stat's size": {"read_file", func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/Stat") {
				fmt.Fprint(w, `{"entry":{"size":"3"}}`)
				return
			}
			w.Write(bytes.Repeat([]byte("B"), 2*max))
		}},
		"a gzip answer nobody asked for": {"read_file", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("\x1f\x8b garbage"))
		}},
		"an upload answer that is not entries": {"write_file", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html>ok</html>"))
		}},
		"a ListDir answer that is not JSON": {"list_files", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"entries":[{"name":"a"},garbage`))
		}},
		"an endless ListDir answer": {"list_files", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"entries":[`)
			e := []byte(`{"name":"` + strings.Repeat("n", 4000) + `","type":"FILE_TYPE_FILE"},`)
			for r.Context().Err() == nil {
				if _, err := w.Write(e); err != nil {
					return
				}
			}
		}},
	}
	for name, m := range malformed {
		e.fake.SetFault(&e2bfake.Fault{Scope: "envd", Handler: m.h})
		start := time.Now()
		// The endless ListDir is read to its 16 MiB bound: seconds under the race detector.
		timeout := 30 * time.Second
		args := map[string]any{"path": "x"}
		switch m.tool {
		case "write_file":
			args["content"] = "y"
		case "read_file":
			args["max_bytes"] = max
		}
		_, err := e.run(m.tool, "s", timeout, 1<<16, args)
		if err == nil || strings.Contains(err.Error(), "limits.timeout") || time.Since(start) > timeout-5*time.Second {
			t.Fatalf("%s: want a prompt error naming the malformed answer, got %v after %s", name, err, time.Since(start))
		}
		t.Logf("%s: %v", name, err)
	}
	e.fake.SetFault(nil)
	if r, err := e.run("read_file", "s", 8*time.Second, 1<<16, map[string]any{"path": "x"}); err != nil || r.File.Content != "x" {
		t.Fatalf("the next read must work: %+v %v", r, err)
	}
}

// TestListFilesBoundsEntries: a directory of more than MaxListEntries entries lists the first
// ones and counts the rest.
func TestListFilesBoundsEntries(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	if _, err := e.run("run_command", "s", 30*time.Second, 1<<16, map[string]any{"command": "mkdir many && cd many && seq 1 1200 | xargs touch"}); err != nil {
		t.Fatal(err)
	}
	r, err := e.run("list_files", "s", 30*time.Second, 1<<16, map[string]any{"path": "many"})
	if err != nil || len(r.Entries) != executor.MaxListEntries || r.EntriesMore != 200 {
		t.Fatalf("want %d entries and 200 more: %d, %d, %v", executor.MaxListEntries, len(r.Entries), r.EntriesMore, err)
	}
}

// pngBytes is a minimal valid 1x1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC")

// TestRunCodePictures: a PNG the code displays (and an SVG as its last value) come back as the
// result's images; the next call has none.
func TestRunCodePictures(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	code := fmt.Sprintf(`import binascii
class P:
    def _repr_png_(self):
        return binascii.a2b_base64(%q)
class S:
    def _repr_svg_(self):
        return '<svg xmlns="http://www.w3.org/2000/svg"/>'
print("before")
display(P())
S()`, base64.StdEncoding.EncodeToString(pngBytes))
	r, err := e.run("run_code", "s", 30*time.Second, 1<<16, map[string]any{"code": code})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Images) != 2 || r.Images[0].MIMEType != "image/png" || !bytes.Equal(r.Images[0].Data, pngBytes) ||
		r.Images[1].MIMEType != "image/svg+xml" || !strings.HasPrefix(string(r.Images[1].Data), "<svg") {
		t.Fatalf("want a png and an svg: %+v", r.Images)
	}
	if !strings.HasPrefix(r.Stdout, "before\n") {
		t.Fatalf("stdout: %q", r.Stdout)
	}
	// A picture shown before an exception still comes back, with the error.
	_, err = e.run("run_code", "s", 30*time.Second, 1<<16, map[string]any{"code": code + "\n1/0"})
	var ce *CodeError
	if !asCodeError(err, &ce) || len(ce.ToolResult().Images) != 1 {
		t.Fatalf("want the exception with the picture shown before it: %v", err)
	}
	r, err = e.run("run_code", "s", 30*time.Second, 1<<16, map[string]any{"code": "1"})
	if err != nil || len(r.Images) != 0 {
		t.Fatalf("no pictures: %+v %v", r, err)
	}
	e.noLeaks()
}

func asCodeError(err error, ce **CodeError) bool {
	c, ok := err.(*CodeError)
	*ce = c
	return ok
}

// TestHostilePictures: an interpreter sending 16 pictures of 1.5 MiB and 112 small ones leaves the call
// holding at most MaxImagesBytes of them and describing at most MaxResults; bad base64 is an
// error; a png field that is no PNG is described, not sent.
func TestHostilePictures(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	big := base64.StdEncoding.EncodeToString(append(append([]byte{}, pngBytes...), make([]byte, 3<<19)...))
	small := base64.StdEncoding.EncodeToString(pngBytes)
	e.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: ndjson(func(emit func(any) error) {
		for i := 0; i < 2*MaxResults; i++ {
			pic := small
			if i < 2*executor.MaxImages {
				pic = big
			}
			if emit(map[string]any{"type": "result", "text": "<pic>", "png": pic}) != nil {
				return
			}
		}
	})})
	r, err := e.run("run_code", "s", 60*time.Second, 1<<16, map[string]any{"code": "1"})
	if err != nil {
		t.Fatal(err)
	}
	held, sent := 0, 0
	for _, im := range r.Images {
		held += len(im.Data)
		if im.Data != nil {
			sent++
		}
	}
	if len(r.Images) > MaxResults || held > executor.MaxImagesBytes || sent > executor.MaxImages || !r.Truncated || sent == 0 {
		t.Fatalf("128 pictures: %d described, %d sent, %d bytes held (bounds %d, %d, %d), truncated %v",
			len(r.Images), sent, held, MaxResults, executor.MaxImages, executor.MaxImagesBytes, r.Truncated)
	}
	for name, ev := range map[string]map[string]any{
		"bad base64":  {"type": "result", "png": "!!!not base64!!!"},
		"not a png":   {"type": "result", "png": base64.StdEncoding.EncodeToString([]byte("GIF89a..."))},
		"jpeg as png": {"type": "result", "jpeg": base64.StdEncoding.EncodeToString(pngBytes)},
	} {
		e.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: ndjson(func(emit func(any) error) { emit(ev) })})
		r, err := e.run("run_code", "s", 20*time.Second, 1<<16, map[string]any{"code": "1"})
		switch {
		case name == "bad base64" && (err == nil || !strings.Contains(err.Error(), "not base64")):
			t.Fatalf("%s: want an error, got %+v %v", name, r, err)
		case name != "bad base64" && (err != nil || len(r.Images) != 1 || r.Images[0].Data != nil || r.Images[0].Omitted == ""):
			t.Fatalf("%s: want it described, not sent: %+v %v", name, r, err)
		}
	}
	e.noLeaks()
}

// TestKeyNeverInFilesOrPictures: a hostile upstream echoing the key in a download or inside a
// picture (svg text, png bytes) does not get it into a result.
func TestKeyNeverInFilesOrPictures(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	if _, err := e.run("write_file", "s", 30*time.Second, 1<<16, map[string]any{"path": "x", "content": "x"}); err != nil {
		t.Fatal(err)
	}
	e.fake.SetFault(&e2bfake.Fault{Scope: "envd", Times: 1, Handler: func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "before %s after", testKey)
	}})
	r, err := e.run("read_file", "s", 30*time.Second, 1<<16, map[string]any{"path": "x"})
	if err != nil {
		t.Fatal(err)
	}
	keyPieces(t, "read_file's content", r.File.Content+r.File.ContentBase64)
	e.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: ndjson(func(emit func(any) error) {
		emit(map[string]any{"type": "result", "svg": "<svg>" + testKey + "</svg>",
			"png": base64.StdEncoding.EncodeToString(append(append([]byte{}, pngBytes...), testKey...))})
	})})
	r, err = e.run("run_code", "s", 30*time.Second, 1<<16, map[string]any{"code": "1"})
	if err != nil || len(r.Images) != 2 {
		t.Fatalf("want two pictures: %+v %v", r, err)
	}
	for _, im := range r.Images {
		keyPieces(t, "a picture", string(im.Data))
	}
}
