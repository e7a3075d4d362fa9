package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fileCall calls one file tool over the real client and decodes its structured result.
func fileCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, executor.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, r, err := callDocker(ctx, cs, tool, args)
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	return res, r
}

// roundTrip writes 1 MiB of random bytes with write_file and reads them back with read_file:
// byte for byte, the sha256s agree (the tools', the bytes', the file on the host's).
func roundTrip(t *testing.T, cs *mcp.ClientSession, hostWS, name string) string {
	t.Helper()
	data := make([]byte, 1<<20)
	rand.Read(data)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])
	res, w := fileCall(t, cs, executor.ToolWriteFile, map[string]any{"path": name, "content_base64": base64.StdEncoding.EncodeToString(data)})
	if res.IsError || w.File == nil || w.File.SHA256 != want || w.File.Size != 1<<20 {
		t.Fatalf("write_file: %s %+v", resultText(res), w.File)
	}
	if onHost, err := os.ReadFile(filepath.Join(hostWS, name)); err != nil || sha256.Sum256(onHost) != sum {
		t.Fatalf("the workspace does not hold the bytes written: %v", err)
	}
	res, r := fileCall(t, cs, executor.ToolReadFile, map[string]any{"path": name})
	if res.IsError || r.File == nil || r.File.Truncated {
		t.Fatalf("read_file: %s", resultText(res))
	}
	got, err := base64.StdEncoding.DecodeString(r.File.ContentBase64)
	if err != nil || sha256.Sum256(got) != sum || r.File.SHA256 != want {
		t.Fatalf("read back %d bytes, sha256 %s, want %s (%v)", len(got), r.File.SHA256, want, err)
	}
	return want
}

// refused says whether a tool result is a refusal naming rule.
func refusedBy(res *mcp.CallToolResult, rule string) bool {
	return res.IsError && strings.Contains(resultText(res), rule)
}

// The allowlist's file tools over stdio: 1 MiB of binary round-trips; paths out of the
// workspace (.., absolute, a link to a host file), protected names, a FIFO and oversized
// content are refused naming their rule; the audit records each file moved.
func TestFilesAllowlist(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { p.Limits.MaxFileBytes = 3 << 19 })
	canary := filepath.Join(f.outside, "canary.txt")
	os.Symlink(canary, filepath.Join(f.ws, "leak"))
	os.Symlink(f.outside, filepath.Join(f.ws, "out"))
	os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o777)
	if st, err := os.Stat(f.ws); err == nil {
		// the workspace owner's repository, as a user's is: only the protect rules refuse a
		// write there (a root serve's file tools act as its commands' user, whom root-owned
		// directories would refuse first)
		uid, gid := fileOwner(t, st)
		os.Chown(filepath.Join(f.ws, ".git"), uid, gid)
		os.Chown(filepath.Join(f.ws, ".git", "hooks"), uid, gid)
	}
	if err := mkfifo(filepath.Join(f.ws, "pipe")); err != nil {
		t.Fatal(err)
	}
	sum := roundTrip(t, f.cs, f.ws, "data/blob.bin")

	for _, p := range []string{"../outside/canary.txt", canary, "leak", "out/canary.txt", "data/../../outside/canary.txt"} {
		res, _ := fileCall(t, f.cs, executor.ToolReadFile, map[string]any{"path": p})
		if !refusedBy(res, "allowlist.workspace") || strings.Contains(resultText(res), f.nonce) {
			t.Errorf("read_file %q: %s", p, resultText(res))
		}
	}
	for _, p := range []string{"../outside/new.txt", filepath.Join(f.outside, "new.txt"), "leak", "out/new.txt"} {
		res, _ := fileCall(t, f.cs, executor.ToolWriteFile, map[string]any{"path": p, "content": "pwned"})
		if !refusedBy(res, "allowlist.workspace") {
			t.Errorf("write_file %q: %s", p, resultText(res))
		}
	}
	for _, p := range []string{".git/hooks/pre-commit", ".envrc", "sub/.git/config", ".github/workflows/ci.yml"} {
		res, _ := fileCall(t, f.cs, executor.ToolWriteFile, map[string]any{"path": p, "content": "#!/bin/sh\nid\n"})
		if !refusedBy(res, "allowlist.protect") {
			t.Errorf("write_file %q: %s", p, resultText(res))
		}
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%q was written", p)
		}
	}
	start := time.Now()
	res, _ := fileCall(t, f.cs, executor.ToolReadFile, map[string]any{"path": "pipe"})
	if !refusedBy(res, "FIFO") || time.Since(start) > 20*time.Second {
		t.Errorf("read_file of a FIFO: %s after %s", resultText(res), time.Since(start))
	}
	res, _ = fileCall(t, f.cs, executor.ToolWriteFile, map[string]any{"path": "big.bin", "content_base64": base64.StdEncoding.EncodeToString(make([]byte, 2<<20))})
	if !refusedBy(res, "limits.max_file_bytes") {
		t.Errorf("oversized write_file: %s", resultText(res))
	}
	if b, _ := os.ReadFile(canary); string(b) != f.nonce {
		t.Errorf("the canary outside changed: %q", b)
	}
	if ch := f.outsideChanged(); len(ch) > 0 {
		t.Errorf("changed outside the workspace: %v", ch)
	}
	res, l := fileCall(t, f.cs, executor.ToolListFiles, map[string]any{"path": "data"})
	if res.IsError || len(l.Entries) != 1 || l.Entries[0].Name != "blob.bin" {
		t.Errorf("list_files data: %s", resultText(res))
	}
	checkAuditFiles(t, f.auditPath, "data/blob.bin", sum)
	// a picture read back is MCP image content too
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 64)...)
	fileCall(t, f.cs, executor.ToolWriteFile, map[string]any{"path": "plot.png", "content_base64": base64.StdEncoding.EncodeToString(png)})
	res, _ = fileCall(t, f.cs, executor.ToolReadFile, map[string]any{"path": "plot.png"})
	var img *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img = ic
		}
	}
	if img == nil || img.MIMEType != "image/png" || string(img.Data) != string(png) {
		t.Errorf("read_file of a PNG: no image content (%+v)", res.Content)
	}
}

// checkAuditFiles finds the audit lines of the write and the read of path, with its size and sha256.
func checkAuditFiles(t *testing.T, auditPath, path, sum string) {
	t.Helper()
	fh, err := os.Open(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	ops := map[string]bool{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e audit.Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		for _, r := range e.Files {
			if r.Path == path && r.Bytes == 1<<20 && r.SHA256 == sum {
				ops[r.Op] = true
			}
		}
	}
	if !ops["write"] || !ops["read"] {
		t.Errorf("audit records of %s: %v (want write and read with bytes and sha256)", path, ops)
	}
}

// Docker, a container per call, with a writable workspace: the file tools work on the host's
// workspace, which the next call's container sees; a protected name and a link out are refused.
func TestFilesDockerCall(t *testing.T) {
	needDocker(t)
	ws := t.TempDir()
	os.Chmod(ws, 0o777)
	outside := t.TempDir()
	canary := filepath.Join(outside, "canary.txt")
	os.WriteFile(canary, []byte("host secret"), 0o644)
	os.Symlink(canary, filepath.Join(ws, "leak"))
	path := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = ws, true
	})
	cs, _ := serveDocker(t, path)
	sum := roundTrip(t, cs, ws, "blob.bin")
	res, r := fileCall(t, cs, sd.ToolPython, map[string]any{"code": "import hashlib;print(hashlib.sha256(open('/workspace/blob.bin','rb').read()).hexdigest())"})
	if strings.TrimSpace(r.Stdout) != sum {
		t.Errorf("the container sees another file: %q %s", r.Stdout, resultText(res))
	}
	for _, p := range []string{"leak", "../canary.txt", canary} {
		res, _ := fileCall(t, cs, executor.ToolReadFile, map[string]any{"path": p})
		if !refusedBy(res, "docker.workspace") || strings.Contains(resultText(res), "host secret") {
			t.Errorf("read_file %q: %s", p, resultText(res))
		}
	}
	// a root serve's tools act as the container's user (here nobody): a root-only file is no
	// more theirs than the container's (red with mutant docker-files-as-serve)
	if os.Geteuid() == 0 {
		os.WriteFile(filepath.Join(ws, "root-only.txt"), []byte("root's secret"), 0o600)
		res, r = fileCall(t, cs, sd.ToolPython, map[string]any{"code": "open('/workspace/root-only.txt').read()"})
		if !strings.Contains(r.Stderr, "PermissionError") {
			t.Errorf("the container read a root-only file: %s %s", r.Stderr, resultText(res))
		}
		res, _ = fileCall(t, cs, executor.ToolReadFile, map[string]any{"path": "root-only.txt"})
		if !res.IsError || strings.Contains(resultText(res), "root's secret") {
			t.Errorf("read_file of a root-only file the container may not read: %s", resultText(res))
		}
	}
	res, _ = fileCall(t, cs, executor.ToolWriteFile, map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\nid\n"})
	if !refusedBy(res, "workspace.commit") {
		t.Errorf("write_file .git/hooks/pre-commit: %s", resultText(res))
	}
	if b, _ := os.ReadFile(canary); string(b) != "host secret" {
		t.Errorf("the host file changed: %q", b)
	}
}

// Docker with a read-only workspace: reads work, write_file is refused naming
// docker.workspace_writable.
func TestFilesDockerReadOnly(t *testing.T) {
	needDocker(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "in.txt"), []byte("hello"), 0o644)
	cs, _ := serveDocker(t, dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Workspace = ws }))
	res, r := fileCall(t, cs, executor.ToolReadFile, map[string]any{"path": "/workspace/in.txt"})
	if res.IsError || r.File == nil || r.File.Content != "hello" {
		t.Errorf("read_file: %s", resultText(res))
	}
	res, _ = fileCall(t, cs, executor.ToolWriteFile, map[string]any{"path": "new.txt", "content": "x"})
	if !refusedBy(res, "docker.workspace_writable") {
		t.Errorf("write_file on a read-only workspace: %s", resultText(res))
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); err == nil {
		t.Error("new.txt was written")
	}
}
