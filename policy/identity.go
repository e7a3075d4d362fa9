package policy

import (
	"os"
	"path/filepath"
	"strings"
)

// sameAncestor is the ancestor of p (p itself included, as far as it exists; clean and absolute)
// that is the directory d by identity (device and inode), or "": a bind mount of d, or another
// spelling of it, is d too, though no string comparison says so (atk33 F5).
func sameAncestor(p string, d os.FileInfo) string {
	for a := p; ; a = filepath.Dir(a) {
		if st, err := os.Stat(a); err == nil && os.SameFile(st, d) {
			return a
		}
		if filepath.Dir(a) == a {
			return ""
		}
	}
}

// withinSame says, as within does by the strings, whether p is dir or below it by identity;
// also how p reaches it: the ancestor of p that is dir.
func withinSame(dir, p string) (string, bool) {
	if mutated("policy-within-identity") {
		return "", false
	}
	di, err := os.Stat(dir)
	if err != nil {
		return "", false
	}
	a := sameAncestor(p, di)
	return a, a != ""
}

// sameAs are the spellings, under a home's or an XDG directory's own path, of the workspace ws
// (clean, absolute, resolved) where it is, lies in or contains that directory by identity but
// not by name: a bind mount of /home/bob is /home/bob (atk33 F5). ws is judged as each of them
// too. Each directory is looked up once; one that does not exist reaches nothing.
func (h Homes) sameAs(ws string) []string {
	type named struct {
		path string
		st   os.FileInfo
	}
	var up []named // ws and its ancestors
	for a := ws; ; a = filepath.Dir(a) {
		if st, err := os.Stat(a); err == nil {
			up = append(up, named{a, st})
		}
		if filepath.Dir(a) == a {
			break
		}
	}
	dirs := append([]string(nil), h.Homes...)
	for _, kv := range h.XDG {
		_, d, _ := strings.Cut(kv, "=")
		dirs = append(dirs, d)
	}
	var out []string
	for _, d := range dirs {
		d = filepath.Clean(d)
		st, err := os.Stat(d)
		if err != nil || !filepath.IsAbs(d) || d == "/" {
			continue
		}
		for _, a := range up { // ws is d or lies in it
			if a.path != d && os.SameFile(a.st, st) {
				rel, _ := filepath.Rel(a.path, ws)
				out = append(out, filepath.Join(d, rel))
			}
		}
		if len(up) > 0 && up[0].path == ws { // ws contains d: an ancestor of d is ws
			if b := sameAncestor(filepath.Dir(d), up[0].st); b != "" && b != ws {
				out = append(out, b)
			}
		}
	}
	return out
}
