// Package homelinks finds the files of a home that are symbolic links into a workspace: a
// dotfiles repository used as the workspace (`~/.cursor/mcp.json -> ~/dotfiles/cursor/mcp.json`,
// `~/.bashrc -> ~/dotfiles/bashrc`). Under the workspace such a file has a name no protect
// pattern knows (`cursor/mcp.json`), while the host reads it as the client config or rc file it
// is at the link: a call's rewrite of it starts the call's command on the host at the client's
// next start (attack round atk40, F6). The schemes protect what Find returns as they protect
// the protect list's paths.
package homelinks

import (
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxEntries bounds the entries looked at in one home (its own entries and those of the
// directories below its dot-directories and ~/bin, the bulky trees of skipped aside). The known
// places (known) are walked first: a home whose known places alone hold more has links where
// clients keep their configs unjudged, said by Found.Cut, and the schemes then refuse the
// workspace's changes (Found.Unjudged). Past the known places, a bound reached in the rest
// (browser profiles, toolchains, a desktop's ~/.local/share: a real home passes 32,768 there,
// and refusing every change for it made the workspace read-only for no link at all) is said
// by Found.Short, logged at WARN once, and the links past it are not looked at (README's
// Known gaps). About 3 µs an entry: 100 ms at the bound, once every Cache.Every at most.
const MaxEntries = 32_768

// Found maps each path inside the workspace that a home's link leads to or through (a file,
// a directory whole, a link on the way, or the first missing name of a dangling one) to the
// link's path ("~/.cursor/mcp.json"), for messages.
type Found struct {
	Targets map[string]string
	Cut     bool   // MaxEntries was reached in the known places: links past it were not looked at
	Short   bool   // MaxEntries was reached past the known places: links past it were not looked at
	CutHome string // the home whose walk reached it (Cut or Short)
	CutAt   string // the directory being listed then ("~/.local/share/x")
}

// known are the places, from a home, where clients, shells and tools keep what they start or
// run: walked first and whole (atk40b F7), so a big directory elsewhere in the home cannot
// push them past the bound. The clients init writes for (internal/templates/clients.toml)
// and other agents, what is on PATH, shells' and the desktop's start files, git and editors.
var known = []string{
	".claude.json", ".claude", ".cursor", ".codex", ".gemini", ".codeium", ".windsurf", ".vscode",
	".config/Code/User", ".config/Cursor/User", ".config/Windsurf/User", ".config/Claude",
	".config/zed", ".config/opencode", ".config/goose", ".continue", ".qwen", ".factory", ".amp",
	".kilocode", ".roo",
	"bin", ".local/bin",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zshenv",
	".zprofile", ".zlogin", ".config/fish", ".inputrc", ".pam_environment", ".xprofile",
	".xsession", ".xinitrc", ".config/environment.d", ".config/autostart", ".config/systemd/user",
	".gitconfig", ".config/git", ".git-templates", ".vimrc", ".vim", ".config/nvim", ".emacs",
	".emacs.d", ".ssh", ".npmrc", ".config/direnv", ".config/mise",
}

// knownCode are further places, from a home, whose files the host's tools read as code or as a
// program to start (atk41 F5: past the bound they went unseen): gradle's init scripts and
// properties (org.gradle.java.home), IPython's startup files, the other VS Code builds' user
// configs (their MCP servers), kubectl's and the AWS CLI's configs (exec, credential_process),
// docker's config and CLI plugins, cargo's config and bin (on PATH), maven's settings, the
// start files of python, R, irb and tmux. Only what a tool reads as config, not the trees it
// fills by use (the class of atk41 F4).
var knownCode = []string{
	".gradle/init.d", ".gradle/init.gradle", ".gradle/init.gradle.kts", ".gradle/gradle.properties",
	".ipython", ".config/VSCodium/User", ".config/Code - Insiders/User", ".vscode-oss", ".vscode-insiders",
	".kube", ".aws", ".docker/config.json", ".docker/cli-plugins", ".docker/contexts",
	".cargo/config", ".cargo/config.toml", ".cargo/bin", ".m2/settings.xml",
	".pythonrc", ".pythonrc.py", ".pythonstartup", ".Rprofile", ".irbrc", ".tmux.conf", ".config/tmux",
}

// skipped are trees of a home not listed: downloads, caches and toolchains a tool fills by the
// thousand, where nothing the user links is kept (from the home). Beside them any directory
// named node_modules or __pycache__, a name ending in "cache" or "caches" (Cache, GPUCache,
// Code Cache), CachedData, and a .git directory's objects.
var skipped = map[string]bool{
	".cache": true, ".npm": true, ".cargo/registry": true, ".cargo/git": true, ".rustup": true,
	".pyenv/versions": true, ".nvm/versions": true, ".m2/repository": true, ".gradle/caches": true,
	".gradle/wrapper": true, ".local/share/Trash": true, ".var": true, ".wine": true, ".steam": true,
	".local/share/Steam": true, ".local/share/flatpak": true, ".conda/pkgs": true,
	".local/share/containers": true, ".local/share/docker": true,
}

// records are the clients' own records, a file per session or task, by the ten thousand in a
// year of use (atk41 F4: ~/.claude/projects and todos passed the bound in a known place, and
// every change was refused): transcripts, not configs. Beside them every VS Code build's
// User/workspaceStorage and User/History (a directory per workspace opened, a file per save).
var records = map[string]bool{
	".claude/projects": true, ".claude/todos": true, ".claude/shell-snapshots": true, ".claude/statsig": true,
	".claude/file-history": true, ".claude/debug": true, ".codex/sessions": true, ".codex/log": true,
	".gemini/tmp": true,
}

func skip(rel, name, parent string) bool {
	if skipped[rel] {
		return true
	}
	if (records[rel] || (name == "workspaceStorage" || name == "History") && filepath.Base(parent) == "User") &&
		!mutated("homelinks-skip-client-records") {
		return true
	}
	l := strings.ToLower(name)
	return name == "node_modules" || name == "__pycache__" || name == "CachedData" ||
		strings.HasSuffix(l, "cache") || strings.HasSuffix(l, "caches") || (name == "objects" && filepath.Base(parent) == ".git")
}

// shallow: an editor's extensions directory (~/.vscode/extensions): listed (an extension linked
// in from the workspace is a link there), the installed extensions' trees not entered.
func shallow(rel string) bool {
	d, b := filepath.Split(rel)
	return b == "extensions" && strings.HasPrefix(d, ".") && strings.Count(d, "/") == 1
}

// Find looks in each home for links that lead into ws (a resolved path), or through it. Where it
// looks: first the known places (known), then the home's dot-entries and ~/bin, and every
// directory below its dot-directories, breadth first (skipped aside), at most MaxEntries
// entries a home. A link to a directory is not entered. Of each link every step is followed
// (os.Readlink, one link at a time): each link on the way that lies inside ws is protected as
// itself (~/.bashrc -> ws/bashrc -> ws/shell/bashrc: a call replacing ws/bashrc would move
// what the host reads, atk40b F2), whether the end lies inside ws or not.
func Find(homes []string, ws string) Found {
	f := Found{Targets: map[string]string{}}
	ws = filepath.Clean(ws)
	walkers := make([]*walker, len(homes))
	// the known places first, in every home; then the rest of each
	for i, h := range homes {
		if h == "" || h == "/" {
			continue
		}
		w := &walker{f: &f, ws: ws, home: h, listed: map[string]bool{}, links: map[string]bool{}}
		if r, err := filepath.EvalSymlinks(h); err == nil {
			w.homeReal = r
		}
		walkers[i] = w
		if !mutated("homelinks-deep-configs") {
			places := known
			if !mutated("homelinks-known-code-places") {
				places = slices.Concat(known, knownCode)
			}
			for _, k := range places {
				w.place(filepath.Join(h, k), k)
			}
		}
		w.list()
	}
	for _, w := range walkers {
		if f.stopped() {
			break
		}
		if w == nil {
			continue
		}
		w.rest = true
		ents, err := os.ReadDir(w.home)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if w.n++; w.n > MaxEntries {
				w.cut("~")
				break
			}
			// a link such as ~/src -> the workspace's src is a shortcut, not a config: what the
			// host reads or runs from a home are its dot-files and ~/bin (on PATH)
			if name := e.Name(); strings.HasPrefix(name, ".") || name == "bin" {
				w.entry(dir{w.home, "", w.homeReal}, e)
			}
		}
		w.list()
	}
	return f
}

// walker walks one home for Find, breadth first.
type walker struct {
	f        *Found
	ws, home string
	homeReal string // home, its links resolved ("" if it does not resolve)
	n        int    // entries looked at
	rest     bool   // past the known places
	queue    []dir
	listed   map[string]bool // directories queued
	links    map[string]bool // links followed
}

// dir is a directory to list: its path, its path from the home, and its real path ("" unknown).
type dir struct{ path, rel, real string }

// inWS says whether the directory whose real path is real is the workspace or lies in it: not
// walked (atk41 F13). A call's own files there pushed the walk past its bound (in a known place,
// ~/.config/nvim as the workspace, every change refused; elsewhere, ~/.dotfiles, links past it
// unseen), and a link inside the workspace is its own file, which the commit judges.
func (w *walker) inWS(real string) bool {
	return real != "" && (real == w.ws || within(w.ws, real)) && !mutated("homelinks-skip-workspace")
}

// place looks at a known place p (rel from the home): a link is followed, a directory queued.
func (w *walker) place(p, rel string) {
	st, err := os.Lstat(p)
	switch {
	case err != nil:
	case st.Mode()&os.ModeSymlink != 0:
		if !w.links[p] {
			w.links[p] = true
			w.f.chain(w.ws, p, "~/"+rel)
		}
	case st.IsDir() && !w.listed[p]:
		w.listed[p] = true
		real, _ := filepath.EvalSymlinks(p)
		if w.inWS(real) {
			return
		}
		w.queue = append(w.queue, dir{p, rel, real})
	}
}

// entry looks at the entry e of the directory d: a link is followed, a directory queued
// unless skipped. A file costs no allocation (most entries are files).
func (w *walker) entry(d dir, e os.DirEntry) {
	link := e.Type()&os.ModeSymlink != 0
	if !link && !e.IsDir() {
		return
	}
	p, rel := filepath.Join(d.path, e.Name()), e.Name()
	if d.rel != "" {
		rel = d.rel + "/" + rel
	}
	real := ""
	if d.real != "" {
		real = filepath.Join(d.real, e.Name()) // a link to a directory is not entered: no link below d
	}
	switch {
	case link:
		if !w.links[p] {
			w.links[p] = true
			w.f.chain(w.ws, p, "~/"+rel)
		}
	case !w.listed[p] && !skip(rel, e.Name(), d.path) && !shallow(d.rel) && deepOK(rel) && !w.inWS(real):
		w.listed[p] = true
		w.queue = append(w.queue, dir{p, rel, real})
	}
}

// list takes the queued directories, breadth first, until none is left or the bound is reached.
func (w *walker) list() {
	for len(w.queue) > 0 && !w.f.stopped() {
		d := w.queue[0]
		w.queue = w.queue[1:]
		ents, err := os.ReadDir(d.path)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if w.n++; w.n > MaxEntries {
				w.cut("~/" + d.rel)
				return
			}
			w.entry(d, e)
		}
	}
}

// cut says the walk reached MaxEntries in at: in the known places a Cut (changes refused), past
// them Short (said once; the rest not looked at).
func (w *walker) cut(at string) {
	w.f.CutHome, w.f.CutAt = w.home, at
	if w.rest && !mutated("homelinks-short-refuses") {
		w.f.Short = true
	} else {
		w.f.Cut = true
	}
}

func (f *Found) stopped() bool { return f.Cut || f.Short }

// deepOK: a directory (from the home) whose entries are looked at. Every one is, but for the
// mutant that keeps the old reach (one level into a dot-directory, two into ~/.config).
func deepOK(rel string) bool {
	if !mutated("homelinks-deep-configs") {
		return true
	}
	n := strings.Count(rel, "/")
	return n == 0 || (n == 1 && strings.HasPrefix(rel, ".config/"))
}

// chain follows the link p (shown as name) one step at a time, each name of each path on the
// way looked at: every link met that lies inside ws is a target (itself, not where it leads),
// and so is the end when it lies inside ws (a file, or a directory whole), or, for a dangling
// one, the first missing name on the way there (a call must not make it).
func (f *Found) chain(ws, p, name string) {
	if mutated("homelinks-chain-middle") {
		if r, err := filepath.EvalSymlinks(p); err == nil && within(ws, r) {
			f.Targets[r] = name
		}
		return
	}
	add := func(t string) {
		if within(ws, t) {
			if _, ok := f.Targets[t]; !ok {
				f.Targets[t] = name
			}
		}
	}
	done, todo := "/", p
	for hops := 0; todo != ""; {
		var comp string
		comp, todo, _ = strings.Cut(strings.TrimLeft(todo, "/"), "/")
		switch comp {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, comp)
		st, err := os.Lstat(next)
		if err != nil {
			add(next) // missing: whoever makes it decides what the host reads
			return
		}
		if st.Mode()&os.ModeSymlink == 0 {
			done = next
			continue
		}
		if hops++; hops > 255 {
			return // a loop: the host's read fails too
		}
		if next != p {
			add(next) // a link on the way, at its real place (done has its links followed)
		}
		t, err := os.Readlink(next)
		if err != nil {
			return
		}
		if filepath.IsAbs(t) {
			done = "/"
		}
		if todo != "" {
			t += "/" + todo
		}
		todo = t
	}
	add(done)
}

// Unjudged is why a change to the workspace is refused when the walk was cut: a link past the
// bound may lead anywhere in it, so no change is judged safe (atk40b F7); "" when the walk
// was whole.
func (f Found) Unjudged() string {
	if !f.Cut || mutated("homelinks-cut-fails-open") {
		return ""
	}
	return fmt.Sprintf("the home %s holds more than %d entries (the bound of the walk that finds a home's links into the workspace, "+
		"which the host reads as its configs); %s and what follows it were not looked at, so a link there may lead to any path of the workspace, "+
		"and no change to it is applied: fewer entries in that home's dot-directories (move or remove the bulky ones) fix it", f.CutHome, MaxEntries, f.CutAt)
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
	// Log, if set, is told once (not at each call) when a walk is cut: the home and the bound.
	Log *slog.Logger

	mu     sync.Mutex
	at     time.Time
	last   Found
	warned bool
}

// Get is the last Find, taken afresh when older than Every.
func (c *Cache) Get() Found {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) >= c.Every {
		c.last, c.at = Find(c.Homes, c.WS), time.Now()
		if c.last.stopped() && !c.warned && c.Log != nil {
			c.warned = true
			if c.last.Cut {
				c.Log.Warn("a home's known config places hold more entries than the walk for its links into the workspace looks at: the workspace's changes are refused until they hold fewer",
					"home", c.last.CutHome, "bound", MaxEntries, "stopped_in", c.last.CutAt, "workspace", c.WS)
			} else {
				c.Log.Warn("a home holds more entries than the walk for its links into the workspace looks at: its client configs and start files were looked at whole, links elsewhere past the bound are not (keep a dotfile you link into the workspace in its protect list)",
					"home", c.last.CutHome, "bound", MaxEntries, "stopped_in", c.last.CutAt, "workspace", c.WS)
			}
		}
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
