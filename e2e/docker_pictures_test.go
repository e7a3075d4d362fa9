package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// e2ePNG writes a small valid PNG with zlib and struct (no matplotlib) and prints its hex.
const e2ePNG = `import zlib, struct, sys
def chunk(t, d):
    return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
raw = b"".join(b"\x00" + bytes([0, 128, 255] * 5) for _ in range(4))
data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 5, 4, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
open("/tmp/outputs/chart.png", "wb").write(data)
sys.stdout.write(data.hex())
`

// A PNG the program writes to /tmp/outputs reaches a real MCP client over stdio as image
// content, in call mode and in a session; in a session the file tools round-trip binary bytes.
// A flood (100 pictures, a 50 MB file, and in call mode a forged 60 MB record) leaves the
// pictures within their bounds and serve's peak memory bounded.
func TestDockerPicturesOverStdio(t *testing.T) {
	needDocker(t)
	for _, mode := range []string{"call", "session"} {
		t.Run(mode, func(t *testing.T) {
			path := dockerPolicy(t, func(p *policy.Policy) {
				dksec.Of(p).Reuse = mode
				p.Limits.Timeout = policy.Duration{Duration: 30 * time.Second}
			})
			cs, cmd := serveDocker(t, path)
			ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
			defer cancel()
			res, r, err := callDocker(ctx, cs, sd.ToolPython, map[string]any{"code": e2ePNG})
			if err != nil || res.IsError {
				t.Fatalf("%v %s", err, resultText(res))
			}
			want, _ := hex.DecodeString(strings.TrimSpace(r.Stdout))
			var imgs []*mcp.ImageContent
			for _, c := range res.Content {
				if im, ok := c.(*mcp.ImageContent); ok {
					imgs = append(imgs, im)
				}
			}
			if len(imgs) != 1 || imgs[0].MIMEType != "image/png" || len(want) == 0 || !bytes.Equal(imgs[0].Data, want) {
				t.Fatalf("image content %d items (%+v), want the program's %d-byte PNG", len(imgs), imgs, len(want))
			}
			if mode == "session" {
				blob := bytes.Repeat([]byte{0, 1, 2, 0xff, 0xfe}, 200000)
				if res, _, err := callDocker(ctx, cs, executor.ToolWriteFile, map[string]any{"path": "/tmp/b.bin", "content_base64": base64.StdEncoding.EncodeToString(blob)}); err != nil || res.IsError {
					t.Fatalf("write_file: %v %s", err, resultText(res))
				}
				res, r, err := callDocker(ctx, cs, executor.ToolReadFile, map[string]any{"path": "/tmp/b.bin"})
				if err != nil || res.IsError || r.File == nil {
					t.Fatalf("read_file: %v %s", err, resultText(res))
				}
				if got, _ := base64.StdEncoding.DecodeString(r.File.ContentBase64); !bytes.Equal(got, blob) {
					t.Fatalf("read_file gave %d bytes back, not the %d written", len(got), len(blob))
				}
			}
			flood := `import os, sys
for i in range(100):
    open("/tmp/outputs/p%03d.png" % i, "wb").write(b"\x89PNG\r\n\x1a\n" + os.urandom(300000))
with open("/tmp/outputs/zbig.png", "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n" + b"\0" * (50 << 20))
`
			if mode == "call" { // the program forges a record with the wrapper's nonce (in its argv)
				flood += `args = open("/proc/self/cmdline", "rb").read().split(b"\0")
nonce = args[args.index(b"-c") + 2]
os.write(1, b"mcpsandbox-data:" + nonce + b":i,YS5wbmc=,60000000,")
for _ in range(60):
    os.write(1, b"QUFB" * (1 << 18))
os.write(1, b"\n")
`
			}
			res, r, err = callDocker(ctx, cs, sd.ToolPython, map[string]any{"code": flood})
			if err != nil || res.IsError {
				t.Fatalf("flood: %v %s", err, resultText(res))
			}
			sent, total := 0, 0
			for _, c := range res.Content {
				if im, ok := c.(*mcp.ImageContent); ok {
					sent++
					total += len(im.Data)
				}
			}
			if sent == 0 || sent > executor.MaxImages || total > executor.MaxImagesBytes || !strings.Contains(r.Stderr, "more files") {
				t.Fatalf("a flood gave %d pictures (%d bytes); stderr %q", sent, total, r.Stderr)
			}
			peak := peakRSS(t, cmd.Process.Pid)
			t.Logf("%s: serve's peak RSS after the flood: %d MB", mode, peak>>20)
			if peak > 120<<20 {
				t.Errorf("serve's peak RSS %d MB after a flood of pictures", peak>>20)
			}
		})
	}
}

// peakRSS is a process's peak resident size (VmHWM).
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}
