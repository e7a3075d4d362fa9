//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// protPat is one entry of the effective protect list.
type protPat struct {
	src      string
	anchored bool           // contains "/": matched against the path from the workspace root
	literal  bool           // no glob characters
	re       *regexp.Regexp // nil for a literal: compiling the 120-odd literals of the default list was most of New's time
}

// matches says whether s (a name, or the path from the workspace root for an anchored pattern)
// is what the pattern names: a literal by equality, which is what its regexp (^(?s:quoted)$)
// matches, and only that.
func (p protPat) matches(s string) bool {
	if p.literal {
		return s == p.src
	}
	return p.re.MatchString(s)
}

func compileProtect(list []string) ([]protPat, error) {
	var out []protPat
	for _, g := range list {
		g = strings.Trim(g, "/")
		pat := protPat{src: g, anchored: strings.Contains(g, "/"), literal: !strings.ContainsAny(g, "*?[")}
		if !pat.literal {
			re, err := policy.CompileGlob(g)
			if err != nil {
				return nil, err
			}
			pat.re = re
		}
		out = append(out, pat)
	}
	return out, nil
}

func protNames(ps []protPat) map[string]bool {
	m := map[string]bool{}
	for _, p := range ps {
		if p.literal && !p.anchored {
			m[p.src] = true
		}
	}
	return m
}

// protection is the protected part of the workspace for one call: the protect patterns, judged
// on resolved paths, plus what they and the host's git set-up resolve to (a symlinked .git or
// .husky, the repository's core.hooksPath, files its config includes), plus any directory that
// is a git directory by its content, whatever its name.
type protection struct {
	e     *Executor
	roots map[string]string // resolved absolute path -> what it is, for messages
	repos map[string]bool   // repository roots already looked at
	// cut, if set, refuses every change at the commit (the workspace read-only whole without a
	// layer): the walk for a home's links into the workspace did not finish
	// (homelinks.Found.Unjudged). A call's arguments are not refused for it: reads are fine
	cut string
}

// protection computes the top-level protected paths of the workspace now. What it finds at the
// top level depends only on the workspace directory's entries, its .git and git's config, so it
// is cached under their identities (inode, size, change times): a call pays three stat calls.
func (e *Executor) protection() *protection {
	key := e.protKey()
	e.protMu.Lock()
	base := e.protBase
	if e.protBaseKey != key || base == nil {
		base = nil
	}
	e.protMu.Unlock()
	if base == nil {
		p := &protection{e: e, roots: map[string]string{}, repos: map[string]bool{}}
		ents, _ := os.ReadDir(e.ws)
		names := make(map[string]bool, len(ents))
		for _, d := range ents {
			names[d.Name()] = true
		}
		for _, pat := range e.protect {
			if !pat.literal || !names[strings.SplitN(pat.src, "/", 2)[0]] {
				continue
			}
			if r := e.resolve(pat.src); r.err == nil && r.exists && r.inside && r.path != e.ws {
				p.roots[r.path] = pat.src
			}
		}
		p.repo(e.ws)
		base = p.roots
		e.protMu.Lock()
		e.protBase, e.protBaseKey = base, key
		e.protMu.Unlock()
	}
	roots := make(map[string]string, len(base))
	for k, v := range base {
		roots[k] = v
	}
	cut := ""
	if !mutated("allowlist-home-links") {
		hl := e.homeLinksCache().Get()
		for target, link := range hl.Targets {
			if _, ok := roots[target]; !ok {
				roots[target] = link + " (a link from a home into the workspace)"
			}
		}
		cut = hl.Unjudged() // the walk was cut: any path may be a link's target (atk40b F7)
	}
	return &protection{e: e, roots: roots, repos: map[string]bool{e.ws: true}, cut: cut}
}

// homeLinksCache is the executor's homelinks.Cache, made at first use.
func (e *Executor) homeLinksCache() *homelinks.Cache {
	e.protMu.Lock()
	defer e.protMu.Unlock()
	if e.homeLinks == nil {
		uid := -1
		var st syscall.Stat_t
		if syscall.Stat(e.ws, &st) == nil {
			uid = int(st.Uid)
		}
		e.homeLinks = &homelinks.Cache{Homes: homelinks.Homes(uid), WS: e.ws, Every: 2 * time.Second, Log: e.log}
	}
	return e.homeLinks
}

// protKey identifies the state protection() depends on at the top level.
func (e *Executor) protKey() string {
	var b strings.Builder
	for _, p := range []string{e.ws, filepath.Join(e.ws, ".git"), filepath.Join(e.ws, ".git", "config")} {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			fmt.Fprintf(&b, "%d:%d:%d:%d.%d:%d.%d;", st.Dev, st.Ino, st.Size, st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
		} else {
			b.WriteString("-;")
		}
	}
	return b.String()
}

// repo adds what a repository rooted at dir makes the host run: its git directory (followed
// through a symlink or a "gitdir:" file), its core.hooksPath, and files its config includes.
func (p *protection) repo(dir string) {
	if p.repos[dir] {
		return
	}
	p.repos[dir] = true
	e := p.e
	dotgit := filepath.Join(dir, ".git")
	st, err := os.Stat(dotgit)
	if err != nil {
		return
	}
	var gitdirs []string
	if st.IsDir() {
		if r := e.resolve(dotgit); r.err == nil && r.exists {
			gitdirs = append(gitdirs, r.path)
		}
	} else if b, err := readSmallRegular(dotgit); err == nil {
		if v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
			v = strings.TrimSpace(v)
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, v)
			}
			if r := e.resolve(v); r.err == nil && r.exists {
				gitdirs = append(gitdirs, r.path)
				if c, err := readSmallRegular(filepath.Join(r.path, "commondir")); err == nil {
					cd := strings.TrimSpace(string(c))
					if !filepath.IsAbs(cd) {
						cd = filepath.Join(r.path, cd)
					}
					if r2 := e.resolve(cd); r2.err == nil && r2.exists {
						gitdirs = append(gitdirs, r2.path)
					}
				}
			}
		}
	}
	hooks := append([]string(nil), e.globalHooks...)
	for _, gd := range gitdirs {
		if within(e.ws, gd) {
			p.roots[gd] = rel(e.ws, gd) + " (a git directory)"
		}
		h, inc := gitConfigRefs(filepath.Join(gd, "config"), 0)
		hooks = append(hooks, h...)
		for _, f := range inc {
			if r := e.resolve(f); r.err == nil && r.inside {
				p.roots[r.path] = rel(e.ws, r.path) + " (included by git's config)"
			}
		}
	}
	for _, h := range hooks {
		if strings.HasPrefix(h, "~/") {
			h = filepath.Join(e.home, h[2:])
		}
		if !filepath.IsAbs(h) {
			h = filepath.Join(dir, h)
		}
		if r := e.resolve(h); r.err == nil && r.inside && r.path != e.ws {
			p.roots[r.path] = rel(e.ws, r.path) + " (git's core.hooksPath)"
		}
	}
}

func rel(ws, p string) string {
	r, err := filepath.Rel(ws, p)
	if err != nil {
		return p
	}
	return r
}

// match says what protects the resolved absolute path p, or "".
func (p *protection) match(path string) string {
	e := p.e
	r := rel(e.ws, path)
	// Repositories enclosing the path, nested ones included, bring their own hooks.
	for d := filepath.Dir(path); within(e.ws, d); d = filepath.Dir(d) {
		p.repo(d)
		if d == e.ws {
			break
		}
	}
	for root, what := range p.roots {
		if within(root, path) {
			return what
		}
	}
	if r != "." {
		parts := strings.Split(r, "/")
		for k := 1; k <= len(parts); k++ {
			prefix := strings.Join(parts[:k], "/")
			if e.protNames[parts[k-1]] {
				return prefix
			}
			for _, pat := range e.protect {
				if pat.literal && !pat.anchored {
					continue // in protNames
				}
				if (pat.anchored && pat.matches(prefix)) || (!pat.anchored && pat.matches(parts[k-1])) {
					return prefix
				}
			}
		}
	}
	if why := e.envMatch(path); why != "" {
		return why
	}
	for d := path; within(e.ws, d); d = filepath.Dir(d) {
		if isGitDir(d) {
			return rel(e.ws, d) + " (a git directory)"
		}
		if d == e.ws {
			break
		}
	}
	return ""
}

// matchPattern says what protected name a generated name (a glob relative to the workspace)
// could be, or "".
func (p *protection) matchPattern(g string) string {
	gen := globTokens(g)
	hit := func(q string) bool {
		return globsIntersect(gen, globTokens(q)) || globsIntersect(gen, globTokens(q+"/*"))
	}
	for _, pat := range p.e.protect {
		if hit(pat.src) || (!pat.anchored && hit("*/"+pat.src)) {
			return pat.src
		}
	}
	for root, what := range p.roots {
		if hit(globQuote(rel(p.e.ws, root))) {
			return what
		}
	}
	return ""
}

// isGitDir: a directory git would use as a repository, by its content.
func isGitDir(d string) bool {
	h, err := os.Lstat(filepath.Join(d, "HEAD"))
	if err != nil || !h.Mode().IsRegular() {
		return false
	}
	o, err := os.Stat(filepath.Join(d, "objects"))
	if err != nil || !o.IsDir() {
		return false
	}
	r, err := os.Stat(filepath.Join(d, "refs"))
	return err == nil && r.IsDir()
}

// gitConfigRefs reads a git config file for core.hooksPath values and included files (paths
// made absolute, relative to the file), following includes a few levels deep.
func gitConfigRefs(file string, depth int) (hooks, includes []string) {
	if depth > 5 {
		return nil, nil
	}
	b, err := readSmallRegular(file)
	if err != nil {
		return nil, nil
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		ln := strings.TrimSpace(sc.Text())
		if ln == "" || ln[0] == '#' || ln[0] == ';' {
			continue
		}
		if ln[0] == '[' {
			end := strings.IndexByte(ln, ']')
			if end < 0 {
				continue
			}
			section = strings.ToLower(strings.Fields(strings.TrimSpace(ln[1:end]) + " ")[0])
			if rest := strings.TrimSpace(ln[end+1:]); rest == "" {
				continue
			} else {
				ln = rest
			}
		}
		k, v, ok := strings.Cut(ln, "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		v = gitValue(v)
		switch {
		case section == "core" && k == "hookspath":
			hooks = append(hooks, v)
		case (section == "include" || strings.HasPrefix(section, "includeif")) && k == "path":
			if !filepath.IsAbs(v) && !strings.HasPrefix(v, "~/") {
				v = filepath.Join(filepath.Dir(file), v)
			}
			includes = append(includes, v)
			h, inc := gitConfigRefs(v, depth+1)
			hooks, includes = append(hooks, h...), append(includes, inc...)
		}
	}
	return hooks, includes
}

// readSmallRegular reads at most 1 MiB of the regular file p, without waiting: a FIFO (or a
// link to one, or to a terminal) where git's files are looked for must not hold serve's calls
// (attack round atk23). Git's own files are small; a huge one is read in part.
func readSmallRegular(p string) ([]byte, error) {
	if mutated("protect-read-blocking") {
		return os.ReadFile(p)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

func gitValue(v string) string {
	v = strings.TrimSpace(v)
	var b strings.Builder
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(v):
			i++
			b.WriteByte(v[i])
		case (c == '#' || c == ';') && !quoted:
			return strings.TrimSpace(b.String())
		default:
			b.WriteByte(c)
		}
	}
	return strings.TrimSpace(b.String())
}

// globalGitHooks reads core.hooksPath from the host's system and global git config: a relative
// value applies to every repository, the workspace's included.
func globalGitHooks(home string) []string {
	files := []string{"/etc/gitconfig", filepath.Join(home, ".gitconfig")}
	if x := xdg.Dir("XDG_CONFIG_HOME"); x != "" {
		files = append(files, filepath.Join(x, "git", "config"))
	} else {
		files = append(files, filepath.Join(home, ".config", "git", "config"))
	}
	var hooks []string
	for _, f := range files {
		h, _ := gitConfigRefs(f, 0)
		hooks = append(hooks, h...)
	}
	return hooks
}

// genRun stands, in a pattern, for the part of a name a program generates: one or more
// letters or digits (split's and csplit's suffix alphabets). globQuote keeps a literal \x01 from meaning it.
const genRun = "\x01"

// gtok is one position of a pattern: a set of bytes (any, any but '/', or one literal), once or
// repeated (zero or more times). Classes are taken as "any": the test errs towards "they meet".
type gtok struct {
	set  byte // 'a' any, 'n' a letter or digit, 'l' literal
	lit  byte
	star bool
}

func globTokens(g string) []gtok {
	var out []gtok
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			out = append(out, gtok{set: 'a', star: true})
		case '?':
			out = append(out, gtok{set: 'a'})
		case genRun[0]:
			out = append(out, gtok{set: 'n'}, gtok{set: 'n', star: true})
		case '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j < 0 {
				out = append(out, gtok{set: 'l', lit: c})
				continue
			}
			class := g[i+1 : i+1+j]
			if len(class) == 1 { // a quoted character, as globQuote writes it
				out = append(out, gtok{set: 'l', lit: class[0]})
			} else {
				out = append(out, gtok{set: 'a'})
			}
			i += j + 1
		default:
			out = append(out, gtok{set: 'l', lit: c})
		}
	}
	return out
}

func overlap(x, y gtok) bool {
	switch {
	case x.set == 'l' && y.set == 'l':
		return x.lit == y.lit
	case x.set == 'l':
		return y.set == 'a' || isAlnum(x.lit)
	case y.set == 'l':
		return x.set == 'a' || isAlnum(y.lit)
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// globsIntersect reports whether some string matches both patterns.
func globsIntersect(a, b []gtok) bool {
	memo := make(map[[2]int]bool)
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		memo[key] = false // a cycle (two runs eating in step) proves nothing
		res := false
		switch {
		case i == len(a) && j == len(b):
			res = true
		case i < len(a) && a[i].star && rec(i+1, j):
			res = true
		case j < len(b) && b[j].star && rec(i, j+1):
			res = true
		case i == len(a) || j == len(b):
		case overlap(a[i], b[j]):
			ni, nj := i+1, j+1
			if a[i].star {
				ni = i
			}
			if b[j].star {
				nj = j
			}
			res = rec(ni, nj)
		}
		memo[key] = res
		return res
	}
	return rec(0, 0)
}
