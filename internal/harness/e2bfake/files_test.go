package e2bfake_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	e2b "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/sandbox"
)

// TestFilesAPI: the fake's envd filesystem API as internal/schemes/e2b/sandbox's client uses it: an upload is read
// back, seen by the sandbox's programs and listed; a missing path is "does not exist"; a
// symlink a program plants does not take the file API out of the sandbox's directory.
func TestFilesAPI(t *testing.T) {
	_, c := setup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sb, err := c.Create(ctx, e2b.CreateOptions{Template: "base", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Kill(context.Background(), sb.ID)
	data := bytes.Repeat([]byte{0, 1, 2, 255}, 1<<16)
	p, err := c.WriteFile(ctx, sb, "d/e/f.bin", data)
	if err != nil || p != "/home/user/d/e/f.bin" {
		t.Fatalf("write: %q %v", p, err)
	}
	got, size, err := c.ReadFile(ctx, sb, "/home/user/d/e/f.bin", 1<<20)
	if err != nil || !bytes.Equal(got, data) || size != int64(len(data)) {
		t.Fatalf("read: %d bytes, size %d, %v", len(got), size, err)
	}
	var out strings.Builder
	if _, err := c.RunCommand(ctx, sb, "wc -c < d/e/f.bin; ln -s /etc escape; ln -s /etc/hostname escape-file", &out, io.Discard); err != nil || strings.TrimSpace(out.String()) != "262144" {
		t.Fatalf("the program must see the upload: %q %v", out.String(), err)
	}
	entries, more, err := c.ListDir(ctx, sb, "d/e")
	if err != nil || more != 0 || len(entries) != 1 || entries[0].Name != "f.bin" || entries[0].Type != "file" || entries[0].Size != int64(len(data)) {
		t.Fatalf("list: %+v %d %v", entries, more, err)
	}
	if _, _, err := c.ReadFile(ctx, sb, "nope", 10); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("a missing file: %v", err)
	}
	// Planted symlinks: reads, writes and lists through them stay refused.
	for _, p := range []string{"escape/hostname", "escape-file", "/home/user/escape/passwd"} {
		if b, _, err := c.ReadFile(ctx, sb, p, 1<<20); err == nil {
			t.Errorf("read through a planted symlink %s: %q", p, b)
		}
	}
	if _, err := c.WriteFile(ctx, sb, "escape/e2bfake-escaped", []byte("x")); err == nil {
		t.Error("a write through a planted symlink succeeded")
	}
	if _, err := os.Stat("/etc/e2bfake-escaped"); err == nil {
		os.Remove("/etc/e2bfake-escaped")
		t.Error("the write through a planted symlink reached the host's /etc")
	}
	if es, _, err := c.ListDir(ctx, sb, "escape"); err == nil {
		t.Errorf("a list through a planted symlink: %d entries", len(es))
	}
}
