package wslayer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// tsConf is a tsconfig.json's module aliases: compilerOptions.paths (from base: baseUrl, else
// the directory of the config that sets them) and baseUrl, merged over its "extends" as
// TypeScript, tsx (get-tsconfig) and ts-node (tsconfig-paths) merge them.
type tsConf struct {
	base    string
	baseURL string // "" when none: a bare specifier is also looked for from it
	paths   map[string][]string
	bad     bool   // not understood (JSONC past the check's reading, an "extends" not resolved)
	why     string // what was not understood
	// the "paths" patterns by prefix, built once (atk39b F5: each specifier was compared with
	// every key); lens are the prefixes' lengths, longest first
	pats map[string][]tsPat
	lens []int
}

type tsPat struct {
	suf     string
	targets []string
}

// Bounds of a tsconfig's reading: the configs an "extends" tree reads (TypeScript allows an
// array) and its depth; past either the config is not understood (fail closed). tsBudget
// bounds the work of matching specifiers with "paths" patterns in a commit: a unit is a prefix
// looked up or a pattern compared (per 64 bytes); spent, what was not judged is not applied.
const (
	tsMaxConfigs = 64
	tsMaxDepth   = 16
)

var tsBudget = 1 << 23 // a variable for the tests

// tsRunners are the words (a command line's, a config's env: NODE_OPTIONS) and the packages (a
// program's own require('tsconfig-paths/register')) that start a program with its tsconfig's
// "paths" applied to every file it loads, whatever its extension (atk39b F4): tsx, ts-node,
// tsconfig-paths, @swc-node/register, bun, vite-node.
var tsRunners = map[string]bool{"tsx": true, "ts-node": true, "ts-node-esm": true, "ts-node-dev": true, "tsnd": true,
	"ts-node-script": true, "ts-node-cwd": true, "ts-node-transpile-only": true, "bun": true, "bunx": true, "vite-node": true,
	"esno": true, "esmo": true, "tsconfig-paths": true, "@swc-node/register": true}

// tsRunner: word names a runner that applies tsconfig "paths" (tsx, `-r tsconfig-paths/register`,
// `--loader ts-node/esm`, `--import=tsx`, node_modules/.bin/tsx, …).
func tsRunner(word string) bool {
	if i := strings.LastIndexByte(word, '='); i >= 0 {
		word = word[i+1:]
	}
	if tsRunners[filepath.Base(word)] {
		return true
	}
	if rest, ok := strings.CutPrefix(word, "node:"); ok {
		word = rest
	}
	if i := strings.LastIndex(word, "node_modules/"); i >= 0 {
		word = word[i+len("node_modules/"):]
	}
	if m := jsName().FindStringSubmatch(word); m != nil {
		return tsRunners[m[1]]
	}
	return false
}

// tsWords turns the tsconfig "paths" on for every JS program once a word of a command line (or
// of what a config runs) names a runner that applies them; what was judged before without them
// is judged again.
func (f *follower) tsWords(words []string) {
	if f.tsOn || mutated("workspace-follow-ts-runner-paths") {
		return
	}
	for _, w := range words {
		if tsRunner(strings.Trim(w, `"'`+"`;&|()")) {
			f.tsTurnOn()
			return
		}
	}
}

func (f *follower) tsTurnOn() {
	f.tsOn = true
	pending := f.tsPending
	f.tsPending = nil
	for _, p := range pending {
		if p.spec == "" {
			f.tsconfig(p.t.by, p.dir)
		} else {
			f.tsPaths(p.t, p.dir, p.spec)
		}
	}
}

type tsLater struct {
	t         todoFile
	dir, spec string
}

// tsScope protects the tsconfig (its "extends" tree) a JS or TS program in dir runs under: a
// TypeScript file's always (tsx, ts-node and bun read it), any other's once a runner that
// applies it is named.
func (f *follower) tsScope(t todoFile, dir string) {
	switch {
	case mutated("workspace-follow-ts-paths"):
	case f.tsOn:
		f.tsconfig(t.by, dir)
	case tsFile(t.path):
		// a TypeScript program runs under a runner that applies the aliases to every file it
		// loads (a .js one too)
		if !mutated("workspace-follow-ts-runner-paths") {
			f.tsTurnOn()
		}
		f.tsconfig(t.by, dir)
	case !mutated("workspace-follow-ts-runner-paths"):
		// one a file read: bounded by maxProgramReads
		f.tsPending = append(f.tsPending, tsLater{t: t, dir: dir})
	}
}

func tsFile(p string) bool {
	switch filepath.Ext(p) {
	case ".ts", ".tsx", ".mts", ".cts":
		return true
	}
	return false
}

// tsAliased judges a bare specifier through the tsconfig "paths" (and baseUrl) of a program a
// runner that applies them starts (a TypeScript file: tsx, ts-node or bun; any, once such a
// runner is named): true when an alias took it. A program's own require of a runner
// (tsconfig-paths/register) turns them on.
func (f *follower) tsAliased(t todoFile, dir, spec string) bool {
	if !f.tsOn && !mutated("workspace-follow-ts-runner-paths") && tsRunner(spec) {
		f.tsTurnOn()
	}
	if !f.tsOn && !tsFile(t.path) {
		if !mutated("workspace-follow-ts-runner-paths") {
			// one a (directory, specifier) jsResolve had not seen: bounded by maxRun
			f.tsPending = append(f.tsPending, tsLater{t: t, dir: dir, spec: spec})
		}
		return false
	}
	return f.tsPaths(t, dir, spec)
}

// tsPaths protects what a tsconfig "paths" alias loads (tsx, ts-node with tsconfig-paths, and
// bundlers resolve `@lib/x` through it; atk38b F5's class): the nearest tsconfig.json up is
// protected, each target is followed (a `*` pattern's directory whole), and under a baseUrl the
// file the specifier names from it. True when an alias matched; a tsconfig not understood
// protects the program's package whole for any specifier that may be an alias.
func (f *follower) tsPaths(t todoFile, dir, spec string) bool {
	c := f.tsconfig(t.by, dir)
	if c == nil {
		return false
	}
	if c.bad {
		f.wholePackage(t, dir, f.scope(t.by, dir), "require("+strconv.Quote(spec)+") beside a tsconfig.json whose \"paths\" the check does not understand ("+c.why+")")
		return true
	}
	if c.baseURL != "" {
		// tsx, tsconfig-paths and TypeScript look a bare name up from baseUrl too
		f.jsFile(t, absFrom(c.baseURL, spec), true)
	}
	targets, star := c.paths[spec], false
	if targets == nil {
		targets, star = f.tsMatch(c, spec)
	}
	if targets == nil {
		return false
	}
	for _, tg := range targets {
		if pre, _, ok := strings.Cut(tg, "*"); ok && star {
			if d := filepath.Dir(absFrom(c.base, pre+"x")); d != f.g.ws {
				f.add(d, t.by)
			} else {
				f.wholePackage(t, d, nil, "require("+strconv.Quote(spec)+"), a tsconfig \"paths\" pattern over the workspace's root")
			}
			continue
		}
		f.jsFile(t, absFrom(c.base, tg), true)
	}
	return true
}

// tsMatch returns the targets of the "paths" patterns with the longest prefix matching spec
// (TypeScript's rule; each of equal prefixes, the map's order not being the file's), looked up
// by prefix length, charged to tsBudget.
func (f *follower) tsMatch(c *tsConf, spec string) (targets []string, star bool) {
	if c.pats == nil {
		c.pats = map[string][]tsPat{}
		seen := map[int]bool{}
		for k, v := range c.paths {
			pre, suf, ok := strings.Cut(k, "*")
			if !ok {
				continue
			}
			c.pats[pre] = append(c.pats[pre], tsPat{suf, v})
			if !seen[len(pre)] {
				seen[len(pre)] = true
				c.lens = append(c.lens, len(pre))
			}
		}
		slices.Sort(c.lens)
		slices.Reverse(c.lens)
	}
	if mutated("workspace-follow-ts-paths-index") {
		// every key compared for each specifier, as before
		best := -1
		for pre, ps := range c.pats {
			for _, p := range ps {
				if !f.tsCharge(1) {
					return nil, false
				}
				if len(pre) >= best && strings.HasPrefix(spec, pre) && len(spec) >= len(pre)+len(p.suf) && strings.HasSuffix(spec, p.suf) {
					best, targets, star = len(pre), p.targets, true
				}
			}
		}
		return targets, star
	}
	for _, n := range c.lens {
		if n > len(spec) {
			continue
		}
		if !f.tsCharge(1 + n/64) {
			return nil, false
		}
		for _, p := range c.pats[spec[:n]] {
			if !f.tsCharge(1 + len(p.suf)/64) {
				return nil, false
			}
			if len(spec) >= n+len(p.suf) && strings.HasSuffix(spec, p.suf) {
				targets, star = append(targets, p.targets...), true
			}
		}
		if star {
			return targets, star
		}
	}
	return nil, false
}

// tsCharge spends n of tsBudget; false (and what is not judged not applied) once it is spent.
func (f *follower) tsCharge(n int) bool {
	f.tsCost += n
	if f.tsCost <= tsBudget {
		return true
	}
	if f.g.runCut == "" && !mutated("workspace-runs-cut-open") {
		f.g.runCut = fmt.Sprintf("programs whose tsconfig \"paths\" take more than %d look-ups to match", tsBudget)
	}
	return false
}

// tsconfig finds (and protects) the nearest tsconfig.json from dir up to the workspace's root,
// the one a call could make nearer, and the configs its "extends" name.
func (f *follower) tsconfig(by, dir string) *tsConf {
	if c, ok := f.tsconf[dir]; ok {
		return c
	}
	var c *tsConf
	for d := dir; d == f.g.ws || strings.HasPrefix(d, f.g.ws+"/"); d = filepath.Dir(d) {
		p := filepath.Join(d, "tsconfig.json")
		if !regular(p) {
			f.add(p, by) // not there: a call's would be the nearest, its aliases the program's
			if d == f.g.ws {
				break
			}
			continue
		}
		if c = f.tsconf["\x00"+p]; c == nil {
			// read once a commit, whichever directories it is the nearest of
			n := 0
			l := f.tsRead(by, p, 0, map[string]bool{}, &n)
			c = &tsConf{base: l.pathsDir, baseURL: l.baseURL, paths: l.paths, bad: l.why != "", why: l.why}
			if l.baseURL != "" {
				c.base = l.baseURL
			}
			if f.tsconf == nil {
				f.tsconf = map[string]*tsConf{}
			}
			f.tsconf["\x00"+p] = c
		}
		break
	}
	if f.tsconf == nil {
		f.tsconf = map[string]*tsConf{}
	}
	f.tsconf[dir] = c
	return c
}

// tsLayer is what a config and the ones it extends set: why, when not understood.
type tsLayer struct {
	baseURL, pathsDir string
	paths             map[string][]string
	why               string
}

// tsRead reads the config p (protected) and merges what it extends as TypeScript does: the
// "extends" in order, each later one over the earlier, the config's own over them all; baseUrl
// from the config that sets it, "paths" from their config's directory (without a baseUrl).
func (f *follower) tsRead(by, p string, depth int, up map[string]bool, n *int) (l tsLayer) {
	rel, _ := filepath.Rel(f.g.ws, p)
	switch {
	case depth > tsMaxDepth || *n >= tsMaxConfigs:
		return tsLayer{why: fmt.Sprintf("an \"extends\" tree past %d configs or %d deep", tsMaxConfigs, tsMaxDepth)}
	case up[p]:
		return tsLayer{why: "an \"extends\" cycle at " + strconv.Quote(rel)}
	}
	*n++
	up[p] = true
	defer delete(up, p)
	f.add(p, by)
	b, cut, err := readSmall(p, maxProgramFile)
	f.reads++
	f.bytes += len(b)
	var tc struct {
		Extends         any
		CompilerOptions struct {
			BaseURL *string `json:"baseUrl"`
			Paths   map[string][]string
		}
	}
	if err != nil || cut || json.Unmarshal(jsonc(b), &tc) != nil {
		return tsLayer{why: strconv.Quote(rel) + " not read as JSONC"}
	}
	var exts []string
	switch x := tc.Extends.(type) {
	case nil:
	case string:
		exts = []string{x}
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return tsLayer{why: "an \"extends\" of " + strconv.Quote(rel) + " that is not a string"}
			}
			exts = append(exts, s)
		}
	default:
		return tsLayer{why: "an \"extends\" of " + strconv.Quote(rel) + " that is not a string"}
	}
	for _, x := range exts {
		q, why := f.tsExtends(by, filepath.Dir(p), x)
		if why != "" {
			return tsLayer{why: why}
		}
		if q == "" {
			continue // a package's the check does not follow (a mutant): as before, no paths
		}
		sub := f.tsRead(by, q, depth+1, up, n)
		if sub.why != "" {
			return sub
		}
		if sub.baseURL != "" {
			l.baseURL = sub.baseURL
		}
		if sub.paths != nil {
			l.paths, l.pathsDir = sub.paths, sub.pathsDir
		}
	}
	if tc.CompilerOptions.BaseURL != nil {
		l.baseURL = absFrom(filepath.Dir(p), *tc.CompilerOptions.BaseURL)
	}
	if tc.CompilerOptions.Paths != nil {
		l.paths, l.pathsDir = tc.CompilerOptions.Paths, filepath.Dir(p)
	}
	return l
}

// tsExtends resolves an "extends" x of a config in dir as tsx (get-tsconfig) and ts-node do: a
// path (with ".json" added), else a package through each node_modules up (its "exports", its
// package.json's "tsconfig", its tsconfig.json; a subpath, with ".json" or "/tsconfig.json"
// added). Every candidate is protected, the package.json that steers the choice too, and a
// workspace package linked in node_modules whole (atk39b F4: Turborepo's
// "@repo/typescript-config/base.json"). why says what was not resolved.
func (f *follower) tsExtends(by, dir, x string) (p, why string) {
	notFound := "the \"extends\" " + strconv.Quote(x) + ", not found"
	if x == "." || x == ".." {
		x += "/tsconfig.json"
	}
	if strings.HasPrefix(x, "./") || strings.HasPrefix(x, "../") || strings.HasPrefix(x, "/") {
		q := absFrom(dir, x)
		cands := []string{q}
		if !strings.HasSuffix(q, ".json") {
			cands = append(cands, q+".json")
		}
		if p = f.tsFirst(by, cands...); p == "" {
			return "", notFound
		}
		return p, ""
	}
	if mutated("workspace-follow-ts-extends-package") {
		return "", "" // a package's, @tsconfig/node20, taken to set no paths
	}
	m := jsName().FindStringSubmatch(x)
	if m == nil {
		return "", "the \"extends\" " + strconv.Quote(x) + ", not a path nor a package name"
	}
	pkg := f.tsPackage(by, dir, m[1])
	if pkg == "" {
		return "", notFound + " in node_modules"
	}
	pjPath := filepath.Join(pkg, "package.json")
	f.add(pjPath, by)
	var pj struct {
		Tsconfig any
		Exports  json.RawMessage
	}
	if regular(pjPath) {
		b, cut, err := readSmall(pjPath, maxProgramFile)
		f.reads++
		f.bytes += len(b)
		if err != nil || cut || json.Unmarshal(b, &pj) != nil {
			return "", strconv.Quote(pjPath) + ", the package.json of an \"extends\", not read as JSON"
		}
	}
	sub := strings.TrimPrefix(m[2], "/")
	if len(pj.Exports) > 0 && string(pj.Exports) != "null" {
		if q, ok := tsExports(pkg, pj.Exports, sub); ok {
			if q == "" || f.tsFirst(by, q) == "" {
				return "", notFound + " where its package's \"exports\" map it"
			}
			return q, ""
		}
	}
	var cands []string
	switch {
	case sub != "":
		s := filepath.Join(pkg, sub)
		if strings.HasSuffix(s, ".json") {
			cands = []string{s}
		} else {
			cands = []string{s, s + ".json", filepath.Join(s, "tsconfig.json")}
		}
	default:
		if s, ok := pj.Tsconfig.(string); ok {
			cands = append(cands, absFrom(pkg, s))
		}
		cands = append(cands, filepath.Join(pkg, "tsconfig.json"))
	}
	if p = f.tsFirst(by, cands...); p == "" {
		return "", notFound
	}
	return p, ""
}

// tsFirst protects each candidate and returns the first that is a file, "" when none is.
func (f *follower) tsFirst(by string, cands ...string) string {
	for _, c := range cands {
		f.add(c, by)
	}
	for _, c := range cands {
		if regular(c) {
			return c
		}
	}
	return ""
}

// tsPackage finds the package name in each node_modules from dir up (a missing one's place
// protected: a call's would be the one read), protects it whole when a workspace package is
// linked there (not under the protected node_modules): its directory, "" when none.
func (f *follower) tsPackage(by, dir, name string) string {
	for d := dir; ; d = filepath.Dir(d) {
		if filepath.Base(d) != "node_modules" {
			q := filepath.Join(d, "node_modules", name)
			if _, err := os.Lstat(q); err == nil {
				if r, err := filepath.EvalSymlinks(q); err == nil && r != q {
					for _, root := range []string{f.g.wsReal, f.g.ws} {
						if rest, ok := strings.CutPrefix(r, root+"/"); ok {
							f.add(filepath.Join(f.g.ws, rest), by)
							break
						}
					}
				}
				if st, err := os.Stat(q); err != nil || !st.IsDir() {
					return ""
				}
				return q
			}
			f.add(q, by)
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// tsExports resolves a package's subpath through its "exports" (exact, else a `*` pattern): ok
// false when they do not map it (then the subpath is taken as a path, as get-tsconfig does); p
// "" when the target is not one file of the package (conditions naming several: not judged).
func tsExports(pkg string, raw json.RawMessage, sub string) (p string, ok bool) {
	key := "."
	if sub != "" {
		key = "./" + sub
	}
	var m map[string]json.RawMessage
	sugar := json.Unmarshal(raw, &m) != nil
	for k := range m {
		sugar = sugar || !strings.HasPrefix(k, ".")
	}
	if sugar {
		m = map[string]json.RawMessage{".": raw}
	}
	target, match := m[key], ""
	if target == nil {
		best := -1
		for k, v := range m {
			pre, suf, cut := strings.Cut(k, "*")
			if cut && len(pre) > best && strings.HasPrefix(key, pre) && len(key) >= len(pre)+len(suf) && strings.HasSuffix(key, suf) {
				best, target, match = len(pre), v, key[len(pre):len(key)-len(suf)]
			}
		}
	}
	if target == nil {
		return "", false
	}
	var leaves []string
	if !jsLeaves(target, &leaves) {
		return "", true
	}
	leaves = slices.Compact(slices.Sorted(slices.Values(leaves)))
	if len(leaves) != 1 || !strings.HasPrefix(leaves[0], "./") {
		return "", true
	}
	q := filepath.Join(pkg, strings.ReplaceAll(leaves[0], "*", match))
	if q != pkg && !strings.HasPrefix(q, pkg+"/") {
		return "", true
	}
	return q, true
}

// jsonc is b with JSONC's comments and trailing commas taken out (tsconfig.json is JSONC).
func jsonc(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			out = append(out, b[i:min(j+1, len(b))]...)
			i = j
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/")) // no copy of the rest: review41 #16
			if mutated("workspace-jsonc-comment-copy") {
				end = strings.Index(string(b[i+2:]), "*/")
			}
			if end < 0 {
				return out
			}
			i += end + 3
		case c == '}' || c == ']':
			k := len(out) - 1
			for k >= 0 && (out[k] == ' ' || out[k] == '\t' || out[k] == '\n' || out[k] == '\r') {
				k--
			}
			if k >= 0 && out[k] == ',' {
				out = append(out[:k], out[k+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
