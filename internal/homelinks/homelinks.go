// Package homelinks finds the files of a home that are symbolic links into a workspace: a
// dotfiles repository used as the workspace (`~/.cursor/mcp.json -> ~/dotfiles/cursor/mcp.json`,
// `~/.bashrc -> ~/dotfiles/bashrc`). Under the workspace such a file has a name no protect
// pattern knows (`cursor/mcp.json`), while the host reads it as the client config or rc file it
// is at the link: a call's rewrite of it starts the call's command on the host at the client's
// next start (attack round atk40, F6). The schemes protect what Find returns as they protect
// the protect list's paths.
package homelinks

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxEntries bounds the entries looked at in one home (the home's own entries, those of its
// dot-directories and of ~/.config and its directories): a home of more has the rest unjudged,
// said by Found.Cut.
const MaxEntries = 8192

// Found maps each resolved path inside the workspace that a home's link leads to (a file, or a
// directory whole) to the link's path ("~/.cursor/mcp.json"), for messages.
type Found struct {
	Targets map[string]string
	Cut     bool // MaxEntries was reached: links past it were not looked at
}

// Find looks in each home for links that resolve inside ws (a resolved path). Where it looks:
// the home's dot-entries and ~/bin, one level into each of its dot-directories (~/.cursor, ~/.gemini, ~/.codex,
// ~/.claude, …), two levels into ~/.config: where clients, shells and editors keep what they start.
// A link to a directory outside ws is not entered.
func Find(homes []string, ws string) Found {
	f := Found{Targets: map[string]string{}}
	n := 0
	link := func(p, name string) {
		if r, err := filepath.EvalSymlinks(p); err == nil && within(ws, r) {
			f.Targets[r] = name
		}
	}
	var walk func(dir, shown string, depth int)
	walk = func(dir, shown string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if n++; n > MaxEntries {
				f.Cut = true
				return
			}
			p, name := filepath.Join(dir, e.Name()), shown+"/"+e.Name()
			if e.Type()&os.ModeSymlink != 0 {
				link(p, name)
				continue
			}
			if !e.IsDir() || depth == 0 {
				continue
			}
			walk(p, name, depth-1)
		}
	}
	for _, h := range homes {
		if h == "" || h == "/" {
			continue
		}
		ents, err := os.ReadDir(h)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if n++; n > MaxEntries {
				f.Cut = true
				break
			}
			p, name := filepath.Join(h, e.Name()), "~/"+e.Name()
			switch {
			case e.Type()&os.ModeSymlink != 0 && (strings.HasPrefix(e.Name(), ".") || e.Name() == "bin"):
				// what the host reads or runs from a home: its dot-files and ~/bin (on PATH); a
				// link such as ~/src -> the workspace's src is a shortcut, not a config
				link(p, name)
			case e.IsDir() && e.Name() == ".config":
				walk(p, name, 1)
			case e.IsDir() && strings.HasPrefix(e.Name(), "."):
				walk(p, name, 0)
			}
		}
	}
	return f
}

// within says whether p lies beneath ws (both resolved); ws itself is not (a link to the
// workspace whole, ~/.project -> it, would protect every path of it).
func within(ws, p string) bool {
	rel, err := filepath.Rel(ws, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// Cache is Find taken again at most every Every: a home's links change only by the user's hand
// (a call cannot reach a home outside its workspace), and a call should not pay for a walk of
// the home.
type Cache struct {
	Homes []string
	WS    string
	Every time.Duration

	mu   sync.Mutex
	at   time.Time
	last Found
}

// Get is the last Find, taken afresh when older than Every.
func (c *Cache) Get() Found {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) >= c.Every {
		c.last, c.at = Find(c.Homes, c.WS), time.Now()
	}
	return c.last
}

// Homes are the homes whose links count for a workspace owned by ownerUID (-1: unknown): serve's
// own and, when the workspace is another user's (a root serve), that user's, where their
// clients keep their configs.
func Homes(ownerUID int) []string {
	var hs []string
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		hs = append(hs, h)
	}
	if ownerUID >= 0 && ownerUID != os.Geteuid() {
		if u, err := user.LookupId(strconv.Itoa(ownerUID)); err == nil && u.HomeDir != "" && (len(hs) == 0 || u.HomeDir != hs[0]) {
			hs = append(hs, u.HomeDir)
		}
	}
	return hs
}

// Patterns are Find's targets as protect patterns of the workspace ws (a resolved path): each
// target's path from ws, glob characters escaped so it matches only itself.
func (f Found) Patterns(ws string) []string {
	var out []string
	for t := range f.Targets {
		rel, err := filepath.Rel(ws, t)
		if err != nil || !within(ws, t) {
			continue
		}
		var b strings.Builder
		for _, r := range filepath.ToSlash(rel) {
			if r == '*' || r == '?' || r == '[' {
				b.WriteString("[" + string(r) + "]")
				continue
			}
			b.WriteRune(r)
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out
}
