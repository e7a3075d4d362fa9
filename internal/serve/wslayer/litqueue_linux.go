package wslayer

import (
	"path/filepath"
	"strconv"
)

// A file a protected program names only by a string literal (open('data/cache.json')) is
// protected (the host's program may load it), but its text is not the program's: a data file
// the call itself wrote first, read as words, let the call's bytes decide what is protected,
// and past the run bound refuse every later change (attack round atk41, F3). It is read only
// when it is a program itself, as program() says: by its extension, or, for a name without one,
// by a shebang or a native executable's head.

// queue puts p on the follower's list, marked as a literal's only when literalPaths names it.
func (f *follower) queue(p, by string, depth int) {
	f.todo = append(f.todo, todoFile{p, by, depth})
	if f.inLit {
		if f.litOnly == nil {
			f.litOnly = map[string]bool{}
		}
		f.litOnly[p] = true
	}
}

// requeue: p, protected already as a literal's only, is named by a program's words now: read
// as they are.
func (f *follower) requeue(p, by string, depth int) {
	if f.inLit || !f.litOnly[p] {
		return
	}
	delete(f.litOnly, p)
	delete(f.seen, p)
	f.todo = append(f.todo, todoFile{p, by, depth})
}

// literalsOf judges the string literals of the program t (in dir): what they name is a
// literal's only.
func (f *follower) literalsOf(t todoFile, dir, text string) {
	f.inLit = true
	defer func() { f.inLit = false }()
	f.literalPaths(t, dir, text)
}

// litHead: t is a file only a literal names and its head says it is not a program: not read
// on (its bytes are data, not words).
func (f *follower) litHead(t todoFile) bool {
	if !f.litOnly[t.path] || mutated("workspace-follow-literal-data-not-read") {
		return false
	}
	if filepath.Ext(t.path) != "" && !mutated("workspace-follow-literal-data-by-name") {
		// a name's extension says what it is: a .json with a shebang is still data, whose
		// first bytes a call may have written (atk42 F3)
		return !program(t.path, "")
	}
	b, _, err := readSmall(t.path, 4096)
	return err == nil && !program(t.path, string(b))
}

// cutBy names the file whose words passed a bound (the program being read, else the config).
func (f *follower) cutBy(by string) string {
	p := f.cur
	if p == "" {
		p = by
	}
	rel, err := filepath.Rel(f.g.ws, p)
	if err != nil {
		rel = p
	}
	return strconv.Quote(filepath.ToSlash(rel))
}
