package sandbox

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"golang.org/x/sys/unix"
)

// mountTable is serve's mount table as mount points and whether each is a local file system
// (localFS), read from /proc/self/mountinfo and read again only when the kernel marks that file
// changed (POLLPRI: a mount or an unmount in serve's namespace).
type mountTable struct {
	mu     sync.Mutex
	f      *os.File
	points []mountPoint // longest first
}

type mountPoint struct {
	dir   string
	local bool
}

// current is the table, read again if it changed; ok is false when it cannot be read.
func (t *mountTable) current() (*mountTable, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		f, err := os.Open("/proc/self/mountinfo")
		if err != nil {
			return nil, false
		}
		t.f = f
	} else {
		fds := []unix.PollFd{{Fd: int32(t.f.Fd()), Events: unix.POLLPRI}}
		if n, err := unix.Poll(fds, 0); err == nil && n == 0 && t.points != nil {
			return t, true
		}
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return nil, false
	}
	b, err := io.ReadAll(t.f)
	if err != nil {
		return nil, false
	}
	t.points = parseMountinfo(b)
	return t, t.points != nil
}

// close drops the kept descriptor (Close).
func (t *mountTable) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f != nil {
		t.f.Close()
		t.f, t.points = nil, nil
	}
}

// local says whether p lies under a local file system's mount point (the longest that holds it).
func (t *mountTable) local(p string) bool {
	for _, m := range t.points {
		if helper.Within(m.dir, p) || m.dir == "/" {
			return m.local
		}
	}
	return false
}

// parseMountinfo reads mountinfo's mount point (field 5) and file system type (the first field
// after " - "), longest mount point first.
func parseMountinfo(b []byte) []mountPoint {
	var out []mountPoint
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		out = append(out, mountPoint{dir: unescapeMountinfo(f[4]), local: localFS[g[0]]})
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].dir) > len(out[j].dir) })
	return out
}

// unescapeMountinfo undoes mountinfo's octal escapes (space, tab, newline, backslash).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
