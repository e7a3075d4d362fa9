package wslayer

import (
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// A glob in a config's command line is matched as sh matches it, for the one match that
// matters: in a program's position sh runs the first match (the others are its arguments), a
// runtime opens its first script. filepath.Glob listed every match of every level (the host's
// tree for `/*/*/*/*/*/*`: 21 s a commit, atk47a F7), from each directory of the line, and
// past 256 matches at the root every change was refused, a bound the call's own files reached
// (atk47a F3). The walk below goes level by level in sorted order (filepath.Glob's order),
// stops at the first match, never leaves the workspace (a pattern outside it names no file a
// call writes) and is charged to one budget per commit.

// maxGlobEntries bounds the directory entries the globs of a commit's config lines read.
var maxGlobEntries = 1 << 16 // a variable for the tests

// readGlobDir is os.ReadDir (the tests count its calls).
var readGlobDir = os.ReadDir

// globFound are a pattern's first matches from a directory (none: nil), as many as were asked
// for, and whether the walk was cut by the budget before it found them.
type globFound struct {
	matches []string
	cut     bool
}

// first is the first match ("": none).
func (r globFound) first() string {
	if len(r.matches) == 0 {
		return ""
	}
	return r.matches[0]
}

// globKey is a walk's cache key: the directory, the pattern and how many matches it took.
type globKey struct {
	dir, pat string
	n        int
}

// globMatches are the first n files (sh's order) the pattern pat (sh's spelling) matches from
// dir, inside the workspace.
func (f *follower) globMatches(dir, pat string, n int) globFound {
	k := globKey{dir, pat, n}
	if r, ok := f.lines.globs[k]; ok {
		return r
	}
	if f.lines.globs == nil {
		f.lines.globs = map[globKey]globFound{}
	}
	start, rest := globStart(dir, pat)
	r := globFound{}
	if f.inWorkspace(start) || mutated("workspace-config-glob-outside") {
		f.globWalk(start, rest, n, &r)
	}
	f.lines.globs[k] = r
	return r
}

// globStart splits pat (from dir) into the directory its fixed leading components name and
// the components after them (the first holds a pattern byte).
func globStart(dir, pat string) (string, []string) {
	start := dir
	if filepath.IsAbs(pat) {
		start = "/"
	}
	parts := strings.Split(pat, "/")
	for len(parts) > 1 && !strings.ContainsAny(parts[0], "*?[\\") {
		start = filepath.Join(start, parts[0])
		parts = parts[1:]
	}
	return start, parts
}

// inWorkspace: p (clean, absolute) is the workspace or below it, in either spelling.
func (f *follower) inWorkspace(p string) bool {
	p = f.g.wsSpelled(filepath.Clean(p))
	return p == f.g.ws || strings.HasPrefix(p, f.g.ws+"/")
}

// globWalk adds to r the paths below dir that the components parts match, depth first in
// sorted order, as sh (and filepath.Glob) order them, until it holds n: `*` and `?` match no
// leading dot, as in sh.
func (f *follower) globWalk(dir string, parts []string, n int, r *globFound) {
	if len(parts) == 0 {
		r.matches = append(r.matches, dir)
		return
	}
	if parts[0] == "" || !strings.ContainsAny(parts[0], "*?[\\") {
		// a fixed component below a pattern (`*/bin/x`), `.` or `..`: joined, in the workspace
		next := filepath.Join(dir, parts[0])
		if !f.inWorkspace(next) && !mutated("workspace-config-glob-outside") {
			return
		}
		if len(parts) == 1 {
			if _, err := os.Lstat(next); err != nil {
				return
			}
		}
		f.globWalk(next, parts[1:], n, r)
		return
	}
	ents, err := readGlobDir(dir)
	if err != nil {
		return
	}
	if f.lines.globWork += len(ents); f.lines.globWork > maxGlobEntries && !mutated("workspace-config-glob-budget") {
		r.cut = true
		return
	}
	pat := goPattern(parts[0])
	for _, e := range ents {
		name := e.Name()
		if name[0] == '.' && parts[0][0] != '.' {
			continue // sh's `*` and `?` match no leading dot
		}
		if ok, err := filepath.Match(pat, name); err != nil || !ok {
			continue
		}
		p := filepath.Join(dir, name)
		if len(parts) > 1 {
			if st, err := os.Stat(p); err != nil || !st.IsDir() {
				continue
			}
		}
		if f.globWalk(p, parts[1:], n, r); len(r.matches) >= n || r.cut {
			return
		}
	}
}

// goPattern is the path component pattern p (sh's spelling) in filepath.Match's: `[!…]` its
// `[^…]`, a POSIX class (`[[:lower:]]`) the C locale's ranges, an equivalence class or
// collating symbol of one character (`[[=a=]]`, `[[.-.]]`) that character, every character of
// a bracket escaped (sh's `]` first, a `-` at an end are literals, to Go malformed), a `[`
// without its `]` a literal, as sh reads each. A bracket it cannot read (a class or symbol it
// does not know) matches any one character: the wider reading (atk48a F5: Go has no POSIX
// classes, so `server/[[:lower:]]ain.py` matched nothing and its literal word named no file).
func goPattern(p string) string {
	if mutated("workspace-config-glob-classes") {
		return strings.ReplaceAll(p, "[!", "[^")
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
		case c == '\\':
			b.WriteString(`\\`) // a trailing backslash: sh's literal
		case c == '[':
			set, end, ok := shBracket(p, i)
			if !ok {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(set)
			i = end
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// posixClasses are the POSIX character classes in the C locale, as rune ranges (bash's `word`
// too).
var posixClasses = map[string][]rune{
	"alpha": {'a', 'z', 'A', 'Z'}, "digit": {'0', '9'}, "alnum": {'a', 'z', 'A', 'Z', '0', '9'},
	"upper": {'A', 'Z'}, "lower": {'a', 'z'}, "space": {'\t', '\r', ' ', ' '}, "blank": {' ', ' ', '\t', '\t'},
	"punct": {'!', '/', ':', '@', '[', '`', '{', '~'}, "print": {' ', '~'}, "graph": {'!', '~'},
	"cntrl": {0, 0x1f, 0x7f, 0x7f}, "xdigit": {'0', '9', 'A', 'F', 'a', 'f'}, "word": {'a', 'z', 'A', 'Z', '0', '9', '_', '_'},
}

// shBracket reads the bracket expression sh reads at p[i] (a `[`): filepath.Match's spelling
// of it, the index of its closing `]`, and false when none closes it (sh's `[` is a literal).
func shBracket(p string, i int) (string, int, bool) {
	j := i + 1
	neg := j < len(p) && (p[j] == '!' || p[j] == '^')
	if neg {
		j++
	}
	var set strings.Builder
	esc := func(r rune) {
		set.WriteByte('\\')
		set.WriteRune(r)
	}
	unread := false
	for first := true; j < len(p); first = false {
		if p[j] == ']' && !first {
			if unread {
				return "?", j, true // any one character (a bracket never matches `/`, nor does `?`)
			}
			if neg {
				return "[^" + set.String() + "]", j, true
			}
			return "[" + set.String() + "]", j, true
		}
		if p[j] == '[' && j+1 < len(p) && strings.IndexByte(":=.", p[j+1]) >= 0 {
			kind := p[j+1]
			if k := strings.Index(p[j+2:], string(kind)+"]"); k >= 0 {
				name := p[j+2 : j+2+k]
				j += k + 4
				rs, known := posixClasses[name]
				switch {
				case kind == ':' && known:
					for x := 0; x+1 < len(rs); x += 2 {
						esc(rs[x])
						set.WriteByte('-')
						esc(rs[x+1])
					}
				case kind != ':' && utf8.RuneCountInString(name) == 1:
					r, _ := utf8.DecodeRuneInString(name)
					esc(r)
				default:
					unread = true
				}
				continue
			}
		}
		lo, n := utf8.DecodeRuneInString(p[j:])
		j += n
		if j+1 < len(p) && p[j] == '-' && p[j+1] != ']' {
			hi, m := utf8.DecodeRuneInString(p[j+1:])
			if hi == '[' && j+2 < len(p) && strings.IndexByte(":=.", p[j+2]) >= 0 {
				unread = true // a range to a class: no range sh defines
			}
			j += 1 + m
			esc(lo)
			set.WriteByte('-')
			esc(hi)
			continue
		}
		esc(lo)
	}
	return "", 0, false
}
