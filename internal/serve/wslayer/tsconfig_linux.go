package wslayer

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
)

// tsConf is a tsconfig.json's module aliases: compilerOptions.paths, from baseUrl.
type tsConf struct {
	base  string
	paths map[string][]string
	bad   bool // not understood (JSONC past the check's reading, an "extends" it does not follow)
}

// tsPaths protects what a tsconfig "paths" alias loads (tsx, ts-node with tsconfig-paths, and
// bundlers resolve `@lib/x` through it; atk38b F5's class): the nearest tsconfig.json up is
// protected, each target is followed (a `*` pattern's directory whole). True when an alias
// matched; a tsconfig not understood protects the program's package whole for any specifier
// that may be an alias.
func (f *follower) tsPaths(t todoFile, dir, spec string) bool {
	c := f.tsconfig(t.by, dir)
	if c == nil {
		return false
	}
	if c.bad {
		f.wholePackage(t, dir, f.scope(t.by, dir), "require("+strconv.Quote(spec)+") beside a tsconfig.json whose \"paths\" the check does not understand")
		return true
	}
	targets, star := c.paths[spec], false
	if targets == nil {
		best := ""
		for k, v := range c.paths {
			pre, suf, ok := strings.Cut(k, "*")
			if ok && len(pre) >= len(best) && strings.HasPrefix(spec, pre) && len(spec) >= len(pre)+len(suf) && strings.HasSuffix(spec, suf) {
				best, targets, star = pre, v, true
			}
		}
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

// tsconfig finds (and protects) the nearest tsconfig.json from dir up to the workspace's root,
// and the one a call could make nearer.
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
		c = &tsConf{base: d}
		// its "extends" chain (relative ones; a package's, @tsconfig/node20, is taken to set no
		// paths), the first that sets "paths" or "baseUrl" ruling
		for range 8 {
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
				c.bad = true
				break
			}
			if tc.CompilerOptions.BaseURL != nil && c.paths == nil && c.base == d {
				c.base = absFrom(filepath.Dir(p), *tc.CompilerOptions.BaseURL)
			}
			if tc.CompilerOptions.Paths != nil {
				c.paths = tc.CompilerOptions.Paths
				if tc.CompilerOptions.BaseURL == nil && c.base == d {
					c.base = filepath.Dir(p)
				}
				break
			}
			x, _ := tc.Extends.(string)
			if _, many := tc.Extends.([]any); many {
				c.bad = true // several: not followed
				break
			}
			if !strings.HasPrefix(x, ".") {
				break
			}
			if p = absFrom(filepath.Dir(p), x); !strings.HasSuffix(p, ".json") {
				p += ".json"
			}
		}
		break
	}
	if f.tsconf == nil {
		f.tsconf = map[string]*tsConf{}
	}
	f.tsconf[dir] = c
	return c
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
			end := strings.Index(string(b[i+2:]), "*/")
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
