package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestE2BFilesAndPictures (issue 27): through a real serve over stdio and a real MCP client,
// against the local E2B server, with reuse = "session": 1 MiB of random bytes written with
// write_file come back from read_file byte-identical, the session's code sees the file, a PNG
// the code displays arrives as MCP image content, and the audit log records the file moves.
func TestE2BFilesAndPictures(t *testing.T) {
	f := newE2BFixture(t, func(p *policy.Policy) {
		e2bsec.Of(p).Reuse = "session"
		p.Limits.Timeout.Duration = 20 * time.Second
	})
	tools, err := f.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "list_files,read_file,run_code,run_command,write_file" {
		t.Fatalf("tools: %v", names)
	}
	data := make([]byte, 1<<20)
	rand.Read(data)
	sum := sha256.Sum256(data)
	var texts []string
	start := time.Now()
	res, r := f.call("write_file", map[string]any{"path": "up/data.bin", "content_base64": base64.StdEncoding.EncodeToString(data)})
	texts = append(texts, text(res))
	if res.IsError || r.File == nil || r.File.SHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("write_file: %s", text(res))
	}
	wrote := time.Since(start)
	res, r = f.call("run_code", map[string]any{"code": "len(open('up/data.bin','rb').read())"})
	if res.IsError || r.Stdout != "1048576\n" {
		t.Fatalf("the session's code must see the written file: %s", text(res))
	}
	start = time.Now()
	res, r = f.call("read_file", map[string]any{"path": "/home/user/up/data.bin"})
	t.Logf("1 MiB through serve over stdio: write_file %s (the session's sandbox created in it), read_file %s", wrote.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if res.IsError || r.File == nil {
		t.Fatalf("read_file: %s", text(res))
	}
	got, _ := base64.StdEncoding.DecodeString(r.File.ContentBase64)
	if !bytes.Equal(got, data) || r.File.Truncated {
		t.Fatalf("read_file: %d bytes back, identical %v, truncated %v", len(got), bytes.Equal(got, data), r.File.Truncated)
	}
	res, r = f.call("list_files", map[string]any{"path": "up"})
	if res.IsError || len(r.Entries) != 1 || r.Entries[0].Name != "data.bin" || r.Entries[0].Size != 1<<20 {
		t.Fatalf("list_files: %s", text(res))
	}

	// A PNG made without matplotlib (zlib and struct), shown by the code.
	res, r = f.call("run_code", map[string]any{"code": `import struct, zlib
def chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
class Plot:
    def _repr_png_(self):
        raw = b''.join(b'\x00' + b'\x00\x80\xff' * 8 for _ in range(8))
        return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 8, 8, 8, 2, 0, 0, 0))
                + chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
print("plotted")
display(Plot())`})
	texts = append(texts, text(res))
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if res.IsError || img == nil || img.MIMEType != "image/png" || !bytes.HasPrefix(img.Data, []byte("\x89PNG\r\n\x1a\n")) || len(r.Images) != 1 {
		t.Fatalf("the PNG must arrive as image content: %s, %+v", text(res), r.Images)
	}
	f.settle(1) // one sandbox for the session's file tools and code
	f.cs.Close()
	f.settle(0)
	f.noKey(texts...)
	a, _ := os.ReadFile(f.auditPath)
	if !strings.Contains(string(a), hex.EncodeToString(sum[:])) || !strings.Contains(string(a), `"image"`) {
		t.Fatalf("the audit log must record the file moves and the picture:\n%.3000s", a)
	}
}

// TestE2BFilesSessionsOverHTTP: two MCP sessions of one `serve --http` (reuse = "session")
// write the same path at once and each reads back its own; a file one writes is invisible to
// the other's read_file, list_files and code; when the sessions end their sandboxes go.
func TestE2BFilesSessionsOverHTTP(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the local E2B server runs on Linux only")
	}
	fake, err := e2bfake.New(e2bfake.Options{APIKey: e2bKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	root := t.TempDir()
	p := policy.Default(e2bsec.Name)
	p.Name, e2bsec.Of(p).APIKeyEnv, e2bsec.Of(p).Reuse = "e2e-e2b-files", e2bKeyEnv, "session"
	p.Limits.Timeout.Duration = 20 * time.Second
	p.Audit.Path = filepath.Join(root, "audit.jsonl")
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "policy.toml")
	write(t, path, string(b), 0o644)
	url, _, _, _ := startHTTPServeWith(t, []string{"--policy", path}, e2bKeyEnv+"="+e2bKey,
		"E2B_API_URL="+fake.URL(), "E2B_SANDBOX_URL="+fake.URL(), "E2B_DOMAIN="+fake.Domain())
	css := httpSessions(t, url, 2)
	call := func(cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, executor.Result) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		var r executor.Result
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
		return res, r
	}
	var wg sync.WaitGroup
	for i, cs := range css {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := fmt.Sprintf("session %d's", i)
			if res, _ := call(cs, "write_file", map[string]any{"path": "mine.txt", "content": mine}); res.IsError {
				t.Errorf("write_file: %s", text(res))
			}
			if res, r := call(cs, "read_file", map[string]any{"path": "mine.txt"}); res.IsError || r.File == nil || r.File.Content != mine {
				t.Errorf("session %d reads back %q: %s", i, mine, text(res))
			}
		}()
	}
	wg.Wait()
	if res, _ := call(css[0], "write_file", map[string]any{"path": "only-a.txt", "content": "a"}); res.IsError {
		t.Fatal(text(res))
	}
	if res, _ := call(css[1], "read_file", map[string]any{"path": "only-a.txt"}); !res.IsError {
		t.Fatalf("session B read session A's file: %s", text(res))
	}
	if res, r := call(css[1], "list_files", map[string]any{}); res.IsError || strings.Contains(text(res), "only-a.txt") || len(r.Entries) == 0 {
		t.Fatalf("session B's list_files: %s", text(res))
	}
	if res, r := call(css[1], "run_command", map[string]any{"command": "ls"}); res.IsError || strings.Contains(r.Stdout, "only-a") {
		t.Fatalf("session B's code sees session A's file: %s", text(res))
	}
	if fake.Count() != 2 {
		t.Fatalf("two sessions, want two sandboxes: %d", fake.Count())
	}
	for _, cs := range css {
		cs.Close() // DELETE: the session ends, and its sandbox
	}
	if !eventually(func() bool { return fake.Count() == 0 }) {
		t.Fatalf("the sessions' sandboxes outlived them: %d", fake.Count())
	}
}
