package sandbox

import (
	"bytes"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/linkwalk"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"golang.org/x/sys/unix"
)

// mountTable is serve's mount table as mount points and whether each is a local file system
// (localFS), read from /proc/self/mountinfo, and read again when the kernel marks that file
// changed (POLLPRI) or when it is older than mountTableMaxAge: on this 6.18 kernel the mark
// missed most mounts (158 of 200 tries), so it only hastens the read.
type mountTable struct {
	mu     sync.Mutex
	f      *os.File
	points mountPoints
	at     time.Time
	raw    []byte // what points were parsed from
	buf    []byte // the next read's buffer (raw's spare)
}

// mountTableMaxAge bounds how long a mount made after the last read goes unseen.
const mountTableMaxAge = time.Second

// mountPoints are a mount table's mount points, longest first (a table read once: a newer read
// makes a new slice).
type mountPoints []mountPoint

type mountPoint struct {
	dir    string
	local  bool
	layers []string // an overlay's absolute layer directories (overlayLayers)
}

// current is the table, read again if it changed; ok is false when it cannot be read.
func (t *mountTable) current() (mountPoints, bool) {
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
		if n, err := unix.Poll(fds, 0); err == nil && n == 0 && t.points != nil && time.Since(t.at) < mountTableMaxAge {
			return t.points, true
		}
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return nil, false
	}
	// Read into a kept buffer and parsed only when it differs from the last read: re-read each
	// second (more often under load, the calls slower), a fresh read and parse was most of
	// what a call allocated on a machine with a FUSE mount.
	b, err := readInto(t.f, t.buf[:0])
	if err != nil {
		return nil, false
	}
	if t.points == nil || !bytes.Equal(b, t.raw) {
		t.points = parseMountinfo(b)
	}
	t.at = time.Now()
	t.buf, t.raw = t.raw, b
	return t.points, t.points != nil
}

// readInto appends f's remaining content to b (io.ReadAll into a buffer kept between reads).
func readInto(f io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// allLocal says whether every mount in the table is local: then no path, link or not, leads to
// one that may not answer, and nothing need be looked up (most servers and CI machines).
func (t mountPoints) allLocal() bool {
	for _, m := range t {
		if !m.local {
			return false
		}
	}
	return true
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
func (t mountPoints) local(p string) bool {
	m, ok := t.holder(p)
	return ok && m.local
}

// holder is the longest mount point that holds p (ok false: none does).
func (t mountPoints) holder(p string) (mountPoint, bool) { return t.holderExcept(p, -1) }

// holderExcept is holder with the i-th entry left out (an overlay's own, for its layers).
func (t mountPoints) holderExcept(p string, i int) (mountPoint, bool) {
	for j, m := range t {
		if j != i && (helper.Within(m.dir, p) || m.dir == "/") {
			return m, true
		}
	}
	return mountPoint{}, false
}

// localResolved says whether p, with its symbolic links followed, lies on local file systems
// all the way: each prefix is checked against the table before it is looked up, so nothing is
// looked up on a mount that may not answer. seen holds the prefixes already found local (one
// call's paths share most of theirs). A missing component ends the walk: the child's lookup
// stops there too.
func (t mountPoints) localResolved(p string, seen map[string]bool) bool {
	if mutated("mounts-fs-links-unfollowed") {
		return t.local(p)
	}
	w, links := linkwalk.New(p), 0
	for next, ok := w.Next(); ok; next, ok = w.Next() {
		if seen[next] {
			w.Enter(next)
			continue
		}
		if !t.local(next) {
			return false
		}
		var st unix.Stat_t
		if unix.Lstat(next, &st) != nil {
			return true
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			seen[next] = true
			w.Enter(next)
			continue
		}
		if links++; links > maxSymlinks {
			return false
		}
		target, err := os.Readlink(next)
		if err != nil {
			return false
		}
		w.Follow(target)
	}
	return true
}

// parseMountinfo reads mountinfo's mount point (field 5) and file system type (the first field
// after " - "), longest mount point first. Two things a type alone would misjudge (attack round
// atk24, F1): mounts stacked on one mount point, of which lookups reach the one on top (the
// point counts local only if every mount there is), and an overlay, whose lookups reach its
// layers (not local if a layer directory named by an absolute path lies on a mount, other than
// the overlay itself, that is not: an overlay over FUSE or NFS; a container's root overlay,
// whose layers are the host's paths and on no mount here, is judged by its type).
func parseMountinfo(b []byte) mountPoints {
	var out mountPoints
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		pre, post, ok := strings.Cut(string(line), " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		m := mountPoint{dir: unescapeMountinfo(f[4]), local: localFS[g[0]]}
		if g[0] == "overlay" && len(g) >= 3 && !mutated("mounts-overlay-layers-unjudged") {
			m.layers = overlayLayers(g[2])
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].dir) > len(out[j].dir) })
	for round := 0; round < 2; round++ { // twice: an overlay over an overlay
		for i := range out {
			for _, d := range out[i].layers {
				if m, ok := out.holderExcept(d, i); ok && !m.local {
					out[i].local = false
				}
			}
		}
	}
	// One entry per mount point, local only if every mount stacked there is.
	merged := out[:0]
	for _, m := range out {
		if n := len(merged); n > 0 && merged[n-1].dir == m.dir && !mutated("mounts-stacked-lower") {
			merged[n-1].local = merged[n-1].local && m.local
			continue
		}
		merged = append(merged, m)
	}
	return merged
}

// overlayLayers are the absolute layer directories an overlay's super options name (lowerdir,
// a colon-separated list, upperdir, workdir): mountinfo escapes a comma, space, tab, newline or
// backslash in them as octal, and overlay a colon in a path as "\:". Relative ones (docker's
// short links) are left out: they name paths in the mounter's directory, not ours.
func overlayLayers(opts string) []string {
	var out []string
	for _, o := range strings.Split(opts, ",") {
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			continue
		}
		switch k {
		case "lowerdir", "lowerdir+", "upperdir", "workdir", "datadir+":
			for _, d := range splitColons(v) {
				if d = unescapeOctal(strings.ReplaceAll(d, `\:`, ":")); strings.HasPrefix(d, "/") {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// splitColons splits s at its colons, except one a backslash escapes.
func splitColons(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ':':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// unescapeOctal undoes mountinfo's \NNN escapes.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// unescapeMountinfo undoes mountinfo's octal escapes (space, tab, newline, backslash).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}
