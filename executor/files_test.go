package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memFS is a FileSystem in memory that records what reached it.
type memFS struct {
	files   map[string][]byte
	listN   int
	written [][]byte
	readMax int64
}

func (m *memFS) WriteFile(ctx context.Context, c Call, p string, data []byte) (*Result, error) {
	if p == "forbidden" {
		return nil, Refuse("test.rule", "no")
	}
	m.files[p] = data
	m.written = append(m.written, data)
	return nil, nil
}

func (m *memFS) ReadFile(ctx context.Context, c Call, p string, max int64) ([]byte, int64, error) {
	m.readMax = max
	d, ok := m.files[p]
	if !ok {
		return nil, 0, errors.New("no such file")
	}
	if p == "greedy" { // a scheme that returns more than asked
		return d, int64(len(d)), nil
	}
	return d[:min(int64(len(d)), max)], int64(len(d)), nil
}

func (m *memFS) ListFiles(ctx context.Context, c Call, p string) ([]FileEntry, int, error) {
	var out []FileEntry
	for i := range m.listN {
		out = append(out, FileEntry{Name: fmt.Sprint(i), Type: "file"})
	}
	return out, 0, nil
}

func fileTool(t *testing.T, fs FileSystem, max int64, name string) Tool {
	t.Helper()
	for _, tl := range FileTools(fs, max, "test", "", &mcp.ToolAnnotations{}) {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return Tool{}
}

func runTool(t *testing.T, tl Tool, args map[string]any) (*Result, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	return tl.Run(context.Background(), Call{Args: b})
}

func ruleOf(err error) string {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Rule
	}
	return ""
}

func TestFileToolsOffNoTools(t *testing.T) {
	if got := FileTools(&memFS{}, 0, "", "", &mcp.ToolAnnotations{}); got != nil {
		t.Fatalf("max_file_bytes 0 gave %d tools", len(got))
	}
}

// Text and base64 both reach the scheme byte for byte, with size and sha256 in the result.
func TestWriteFileEncodings(t *testing.T) {
	m := &memFS{files: map[string][]byte{}}
	w := fileTool(t, m, 1<<20, ToolWriteFile)
	bin := []byte{0, 1, 2, 0xff, 0xfe, '\n'}
	if _, err := runTool(t, w, map[string]any{"path": "a.txt", "content": "héllo"}); err != nil {
		t.Fatal(err)
	}
	res, err := runTool(t, w, map[string]any{"path": "b.bin", "content_base64": base64.StdEncoding.EncodeToString(bin)})
	if err != nil {
		t.Fatal(err)
	}
	if string(m.files["a.txt"]) != "héllo" || !bytes.Equal(m.files["b.bin"], bin) {
		t.Fatalf("files = %q", m.files)
	}
	sum := sha256.Sum256(bin)
	if res.File == nil || res.File.Size != int64(len(bin)) || res.File.SHA256 != hex.EncodeToString(sum[:]) || res.File.Path != "b.bin" {
		t.Fatalf("result %+v", res.File)
	}
	for _, bad := range []map[string]any{
		{"path": "x", "content": "a", "content_base64": "YQ=="},
		{"path": "x"},
		{"path": "x", "content_base64": "not base64!"},
	} {
		if _, err := runTool(t, w, bad); ruleOf(err) != "tool.arguments" {
			t.Errorf("%v: %v, want a tool.arguments refusal", bad, err)
		}
	}
	if _, err := runTool(t, w, map[string]any{"path": "forbidden", "content": "x"}); ruleOf(err) != "test.rule" {
		t.Errorf("the scheme's refusal was not passed on: %v", err)
	}
}

// Content past limits.max_file_bytes is refused naming the rule, in either encoding, before the
// scheme sees it; paths are bounded and checked.
func TestWriteFileCapsAndPaths(t *testing.T) {
	m := &memFS{files: map[string][]byte{}}
	w := fileTool(t, m, 10, ToolWriteFile)
	for _, args := range []map[string]any{
		{"path": "x", "content": strings.Repeat("a", 11)},
		{"path": "x", "content_base64": base64.StdEncoding.EncodeToString(make([]byte, 11))},
		{"path": "x", "content_base64": base64.StdEncoding.EncodeToString(make([]byte, 1000))},
	} {
		_, err := runTool(t, w, args)
		if ruleOf(err) != RuleFileSize || !strings.Contains(err.Error(), "limits.max_file_bytes") {
			t.Errorf("oversized write: %v", err)
		}
	}
	if _, err := runTool(t, w, map[string]any{"path": "x", "content": strings.Repeat("a", 10)}); err != nil {
		t.Errorf("a write at the bound: %v", err)
	}
	for _, p := range []string{"", "a\x00b", strings.Repeat("a", MaxPathBytes+1)} {
		if _, err := runTool(t, w, map[string]any{"path": p, "content": "x"}); ruleOf(err) != RuleFilePath {
			t.Errorf("path %q: %v", p, err)
		}
	}
	if len(m.written) != 1 {
		t.Errorf("%d writes reached the scheme, want 1", len(m.written))
	}
}

// read_file asks the scheme for at most max_bytes (never more than the bound), cuts what a
// scheme returned past it, says truncated, and encodes text as text and the rest as base64.
func TestReadFileBoundsAndEncodings(t *testing.T) {
	bin := []byte{'a', 0, 'b'}
	m := &memFS{files: map[string][]byte{"t.txt": []byte("hello world"), "b.bin": bin, "greedy": bytes.Repeat([]byte("x"), 100)}}
	r := fileTool(t, m, 50, ToolReadFile)
	res, err := runTool(t, r, map[string]any{"path": "t.txt"})
	if err != nil || res.File.Content != "hello world" || res.File.ContentBase64 != "" || res.File.Truncated || m.readMax != 50 {
		t.Fatalf("text read: %+v %v (max %d)", res.File, err, m.readMax)
	}
	res, err = runTool(t, r, map[string]any{"path": "b.bin"})
	if err != nil || res.File.ContentBase64 != base64.StdEncoding.EncodeToString(bin) || res.File.Content != "" {
		t.Fatalf("binary read: %+v %v", res.File, err)
	}
	res, err = runTool(t, r, map[string]any{"path": "t.txt", "max_bytes": 5})
	if err != nil || res.File.Content != "hello" || !res.File.Truncated || res.File.Size != 11 || m.readMax != 5 {
		t.Fatalf("max_bytes 5: %+v %v", res.File, err)
	}
	sum := sha256.Sum256([]byte("hello"))
	if res.File.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 is not of the bytes read")
	}
	if _, err = runTool(t, r, map[string]any{"path": "t.txt", "max_bytes": 1000}); err != nil || m.readMax != 50 {
		t.Errorf("max_bytes past the bound asked for %d", m.readMax)
	}
	res, err = runTool(t, r, map[string]any{"path": "greedy"})
	if err != nil || len(res.File.Content) != 50 || !res.File.Truncated {
		t.Errorf("a scheme's extra bytes were not cut: %d", len(res.File.Content))
	}
	if _, err := runTool(t, r, map[string]any{"path": "t.txt", "max_bytes": -1}); ruleOf(err) != "tool.arguments" {
		t.Errorf("negative max_bytes: %v", err)
	}
}

// A picture read whole comes back as an image too (bounded); a truncated one does not.
func TestReadFilePictureIsImage(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 40)...)
	m := &memFS{files: map[string][]byte{"plot.png": png, "notes.txt": []byte("x")}}
	r := fileTool(t, m, 1<<20, ToolReadFile)
	res, err := runTool(t, r, map[string]any{"path": "plot.png"})
	if err != nil || len(res.Images) != 1 || res.Images[0].MIMEType != "image/png" || !bytes.Equal(res.Images[0].Data, png) {
		t.Fatalf("picture read: %+v %v", res.Images, err)
	}
	if len(ImageContents(res)) != 1 {
		t.Errorf("the picture is not MCP image content")
	}
	res, _ = runTool(t, r, map[string]any{"path": "plot.png", "max_bytes": 10})
	if len(res.Images) != 0 {
		t.Errorf("a truncated picture was sent as an image")
	}
	res, _ = runTool(t, r, map[string]any{"path": "notes.txt"})
	if len(res.Images) != 0 {
		t.Errorf("a text file was sent as an image")
	}
}

// An SVG is never MCP image content (clients reject image/svg+xml): read_file gives its text in
// content and nothing more; a program's SVG picture goes as an embedded text resource.
func TestSVGIsNotImageContent(t *testing.T) {
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`)
	m := &memFS{files: map[string][]byte{"logo.svg": svg}}
	r := fileTool(t, m, 1<<20, ToolReadFile)
	res, err := runTool(t, r, map[string]any{"path": "logo.svg"})
	if err != nil || res.File.Content != string(svg) {
		t.Fatalf("svg read: %+v %v", res, err)
	}
	if len(res.Images) != 0 || len(ImageContents(res)) != 0 {
		t.Errorf("read_file's SVG was also sent as a picture: %+v", res.Images)
	}
	res = &Result{Images: BoundImages([]Image{NewImage("plot.svg", svg)})}
	cs := ImageContents(res)
	if len(cs) != 1 {
		t.Fatalf("contents: %+v", cs)
	}
	er, ok := cs[0].(*mcp.EmbeddedResource)
	if !ok || er.Resource.MIMEType != MIMESVG || er.Resource.Text != string(svg) || er.Resource.URI != "sandbox:///plot.svg" {
		t.Errorf("an SVG picture is %#v, want an embedded text resource sandbox:///plot.svg", cs[0])
	}
}

// list_files returns at most MaxListEntries entries and counts the rest, even from a scheme
// that returned more; an empty directory is an empty list, not null.
func TestListFilesBound(t *testing.T) {
	m := &memFS{listN: MaxListEntries + 7}
	l := fileTool(t, m, 1, ToolListFiles)
	res, err := runTool(t, l, map[string]any{})
	if err != nil || len(res.Entries) != MaxListEntries || res.EntriesMore != 7 {
		t.Fatalf("%d entries, %d more, %v", len(res.Entries), res.EntriesMore, err)
	}
	m.listN = 0
	res, err = runTool(t, l, map[string]any{"path": "d"})
	if err != nil || res.Entries == nil {
		t.Fatalf("empty list: %+v %v", res, err)
	}
}

// Each file tool carries its own annotation title (not one shared by all three), the sentence on
// how writes are checked is in write_file's description only, and the reading tools are read-only.
func TestFileToolsMetadata(t *testing.T) {
	writes := "A write is checked as a command's writes are."
	ts := FileTools(&memFS{}, 1<<20, "Paths are relative to the workspace.", writes, &mcp.ToolAnnotations{Title: "shared", DestructiveHint: new(bool)})
	if len(ts) != 3 {
		t.Fatalf("%d tools", len(ts))
	}
	titles := map[string]bool{}
	for _, tl := range ts {
		a := tl.Annotations
		if a == nil || a.Title != tl.Title || a.Title == "" || titles[a.Title] {
			t.Errorf("%s: annotation title %q, tool title %q (each its own)", tl.Name, a.Title, tl.Title)
		}
		titles[a.Title] = true
		if !strings.Contains(tl.Description, "Paths are relative to the workspace.") {
			t.Errorf("%s: description without where: %q", tl.Name, tl.Description)
		}
		writer := tl.Name == ToolWriteFile
		if strings.Contains(tl.Description, writes) != writer {
			t.Errorf("%s: the write-checking sentence belongs to write_file only: %q", tl.Name, tl.Description)
		}
		if a.ReadOnlyHint == writer {
			t.Errorf("%s: readOnlyHint %v", tl.Name, a.ReadOnlyHint)
		}
	}
}

// read_file sends text as text, but a file mostly of control bytes as base64: JSON writes each
// as six bytes, twice (attack round atk25b, F1: a 4 MiB file made a 38 MB answer). Red with
// them sent as text (mutant read-file-controls-as-text).
func TestReadFileControlBytesAsBase64(t *testing.T) {
	for _, c := range []struct {
		data string
		text bool
	}{
		{"plain text\twith tabs\r\nand lines\n", true},
		{"<p>a page of text, whose angle brackets and &amp; are few against its words</p>", true},
		{strings.Repeat("<", 4096), false},
		{strings.Repeat("\x01", 4096), false},
		{strings.Repeat("mostly text ", 10) + strings.Repeat("\x1b", 4), true},
		{"a\x00b", false},
		{"\xff\xfe", false},
	} {
		if got := textLike([]byte(c.data)); got != c.text {
			t.Errorf("%.30q: sent as text %v, want %v", c.data, got, c.text)
		}
	}
}
