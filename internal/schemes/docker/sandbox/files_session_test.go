package sandbox

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"runtime"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// pngPy writes a small valid PNG with zlib and struct (no matplotlib) to the path given.
const pngPy = `import zlib, struct
def png(path, w=4, h=3):
    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xffffffff)
    raw = b"".join(b"\x00" + bytes([255, 0, 0] * w) for _ in range(h))
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    open(path, "wb").write(data)
    return data
`

// write_file then read_file round-trips 1 MiB of random bytes in a session's container, as the
// program sees them; relative paths follow the interpreter's working directory; another
// session cannot see the file; list_files is bounded; a read is cut at max_bytes.
func TestDockerSessionFiles(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	blob := make([]byte, 1<<20)
	rand.Read(blob)
	b64 := base64.StdEncoding.EncodeToString(blob)
	// The session has no container yet: write_file starts it.
	r := mustIn(t, e, "A", executor.ToolWriteFile, map[string]any{"path": "/tmp/blob.bin", "content_base64": b64})
	if r.File == nil || r.File.Size != 1<<20 {
		t.Fatalf("write_file: %+v", r)
	}
	if got := mustIn(t, e, "A", ToolPython, py("import hashlib; print(hashlib.sha256(open('/tmp/blob.bin','rb').read()).hexdigest())")); strings.TrimSpace(got.Stdout) != r.File.SHA256 {
		t.Fatalf("the program sees another file: %+v, want sha256 %s", got, r.File.SHA256)
	}
	r = mustIn(t, e, "A", executor.ToolReadFile, map[string]any{"path": "/tmp/blob.bin"})
	got, err := base64.StdEncoding.DecodeString(r.File.ContentBase64)
	if err != nil || !bytes.Equal(got, blob) || r.File.Truncated || r.File.Size != 1<<20 {
		t.Fatalf("read_file: %d bytes back (err %v), equal %v, %+v", len(got), err, bytes.Equal(got, blob), r.File.Truncated)
	}
	r = mustIn(t, e, "A", executor.ToolReadFile, map[string]any{"path": "/tmp/blob.bin", "max_bytes": 1000})
	if got, _ := base64.StdEncoding.DecodeString(r.File.ContentBase64); !bytes.Equal(got, blob[:1000]) || !r.File.Truncated {
		t.Fatalf("read_file max_bytes 1000: %d bytes, truncated %v", len(got), r.File.Truncated)
	}
	// Relative paths: the interpreter's working directory, wherever the program moved it.
	mustIn(t, e, "A", ToolPython, py("import os; os.makedirs('/tmp/d', exist_ok=True); os.chdir('/tmp/d')"))
	mustIn(t, e, "A", executor.ToolWriteFile, map[string]any{"path": "rel.txt", "content": "hi there"})
	if r := mustIn(t, e, "A", ToolPython, py("print(open('/tmp/d/rel.txt').read())")); r.Stdout != "hi there\n" {
		t.Fatalf("a relative write: %+v", r)
	}
	// The container's permissions decide: its root is read-only.
	if _, err := callIn(t, e, "A", executor.ToolWriteFile, map[string]any{"path": "/etc/x", "content": "x"}); err == nil || !strings.Contains(err.Error(), "Read-only") {
		t.Fatalf("write_file /etc/x: %v", err)
	}
	// list_files: 1100 files, 1000 listed and 100 counted.
	mustIn(t, e, "A", ToolPython, py("import os\nos.makedirs('/tmp/many')\nfor i in range(1100): open('/tmp/many/f%04d' % i, 'w').write('x' * (i % 7))"))
	r = mustIn(t, e, "A", executor.ToolListFiles, map[string]any{"path": "/tmp/many"})
	if len(r.Entries) != executor.MaxListEntries || r.EntriesMore != 100 {
		t.Fatalf("list_files: %d entries, %d more", len(r.Entries), r.EntriesMore)
	}
	for _, en := range r.Entries {
		if en.Type != "file" || !strings.HasPrefix(en.Name, "f") {
			t.Fatalf("an entry %+v", en)
		}
	}
	r = mustIn(t, e, "A", executor.ToolListFiles, map[string]any{})
	if len(r.Entries) != 1 || r.Entries[0].Name != "rel.txt" {
		t.Fatalf("list_files of the working directory: %+v", r.Entries)
	}
	// Session B, its own container: A's file is not there.
	if _, err := callIn(t, e, "B", executor.ToolReadFile, map[string]any{"path": "/tmp/blob.bin"}); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Fatalf("session B reads A's file: %v", err)
	}
	if n := e.SessionContainers(); n != 2 {
		t.Fatalf("%d session containers, want 2", n)
	}
}

// A program that takes over the supervisor's channel (it stops the supervisor and answers the
// next request in its place, with a 40 MB record) gets the operation refused: serve holds no
// more of the answer than the operation's budget. The supervisor is out of the program's reach
// (TestSessionStdinUnreachableThroughProc) but under gVisor: the test spawns it reachable, as
// there, to attack serve's side.
func TestDockerSessionFilesHostileReply(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	e.spec.reachableWrapper = true
	mustIn(t, e, "A", ToolPython, py(`import os, subprocess, sys
code = r'''
import os, signal, sys, time
sup = int(sys.argv[1])
time.sleep(1.0)
os.kill(sup, signal.SIGSTOP)
fd = os.open("/proc/%d/fd/0" % sup, os.O_RDONLY)
head = b""
while not head.endswith(b"\n"):
    head += os.read(fd, 1)
_, kind, cn, reset, n = head.split()
n = int(n)
while n > 0:
    n -= len(os.read(fd, min(n, 65536)))
os.write(1, b"mcpsandbox-data:" + cn + b":r,5,")
chunk = b"QUFB" * (1 << 18)
for _ in range(40):
    os.write(1, chunk)
os.write(1, b"\n")
mark = b"mcpsandbox-end:%s:0:0\n" % cn
os.write(1, mark)
os.write(2, mark)
'''
subprocess.Popen([sys.executable, "-c", code, str(os.getppid())], start_new_session=True,
                 stdin=subprocess.DEVNULL)
`))
	time.Sleep(6 * time.Second) // the impostor stops the supervisor 1 s after the call
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := callIn(t, e, "A", executor.ToolReadFile, map[string]any{"path": "/tmp/x"})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "answered more than serve reads") {
		t.Fatalf("read_file answered by an impostor with 40 MB: err %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 32<<20 {
		t.Errorf("serve allocated %d MB for a hostile 40 MB answer", d>>20)
	}
}

// A picture the program writes to /tmp/outputs comes back with its call, in call mode and in a
// session (where the supervisor empties the directory after each call); a flood of files and a
// 50 MB one stay within the pictures' bounds, and serve's memory with them.
func TestDockerPictures(t *testing.T) {
	eng := needEngine(t)
	for _, mode := range []string{"call", "session"} {
		t.Run(mode, func(t *testing.T) {
			e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Reuse = mode }))
			r := mustIn(t, e, "S", ToolPython, py(pngPy+"import sys\nd = png('/tmp/outputs/chart.png')\nsys.stdout.write(d.hex())"))
			if len(r.Images) != 1 || r.Images[0].MIMEType != "image/png" || r.Images[0].Omitted != "" {
				t.Fatalf("%s: images %+v, result %+v", mode, r.Images, r)
			}
			if want := strings.TrimSpace(r.Stdout); want == "" || base16(r.Images[0].Data) != want {
				t.Fatalf("%s: the picture's bytes differ from the program's (%d bytes)", mode, len(r.Images[0].Data))
			}
			if mode == "session" {
				if r := mustIn(t, e, "S", ToolShell, sh("ls -A /tmp/outputs | wc -l")); strings.TrimSpace(r.Stdout) != "0" || len(r.Images) != 0 {
					t.Fatalf("the outputs directory after a call: %+v", r)
				}
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			r = mustIn(t, e, "S", ToolPython, py(pngPy+`
for i in range(100):
    png("/tmp/outputs/p%03d.png" % i, 200, 200)
with open("/tmp/outputs/zbig.png", "wb") as f:
    f.write(b"\x89PNG\r\n\x1a\n")
    f.write(b"\0" * (50 << 20))
`))
			runtime.ReadMemStats(&after)
			sent, total := 0, 0
			for _, im := range r.Images {
				if im.Data != nil {
					sent++
					total += len(im.Data)
				}
			}
			if sent == 0 || sent > executor.MaxImages || total > executor.MaxImagesBytes || !strings.Contains(r.Stderr, "more files") {
				t.Fatalf("%s: a flood gave %d pictures (%d bytes): %s", mode, sent, total, r.Stderr)
			}
			if d := after.TotalAlloc - before.TotalAlloc; d > 48<<20 {
				t.Errorf("%s: serve allocated %d MB for a flood of pictures", mode, d>>20)
			}
		})
	}
}

func base16(b []byte) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, hex[c>>4], hex[c&15])
	}
	return string(out)
}
