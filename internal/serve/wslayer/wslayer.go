// Package wslayer is the transactional workspace: a call's writes land in a private overlay
// upper layer over the real workspace, and when the call ends serve commits them back one by
// one after checking each (DESIGN.md "The workspace is transactional"). Path rules cannot see
// what a write means: a program creating .git/hooks/pre-commit where there was no .git, a
// symlink to /etc/shadow, a FIFO, a setuid file, or writing through a hard link the host made
// all reach the host through a writable workspace. Here each change is judged as a change.
package wslayer

import (
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/casefold"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// MaxEntries bounds the entries one commit looks at (files, directories, links, deletions):
// past it the rest are refused, so a call leaving a million empty files cannot stall serve.
const MaxEntries = 100_000

// MaxDepth bounds how deep below the workspace root a committed entry may lie: each level the
// commit walks holds two directories open, and a call nesting 100,000 directories must not
// run serve out of descriptors.
const MaxDepth = 256

// MaxLayerEntries bounds the entries (files, directories, links) a running call's layer may
// hold: past it Size reports the layer over any limit, so the watchdog stops the call. Empty
// files hold no bytes but an inode each of serve's disk, and every walk of the layer (the
// watchdog's, the commit's, its removal) reads each directory whole: a call making millions
// must not exhaust the disk's inodes or serve's memory. The commit applies at most MaxEntries.
var MaxLayerEntries = 4 * MaxEntries

// MaxRefused bounds the refusals a result lists (the rest are counted), and MaxRefusedText the
// bytes of each one's path and reason: a call leaving 100,000 refused links with 4 KiB targets
// must not make a 400 MB answer.
const (
	MaxRefused     = 1000
	MaxRefusedText = 512
)

// MaxApplied bounds the applied changes a result names (executor.WorkspaceChanges.Applied:
// deletions first; the rest counted, deletions among them in Deleted), each path clipped to
// MaxRefusedText: a call leaving 100,000 files must not make a 50 MB answer. MaxShown of them
// are named in the text result.
const (
	MaxApplied = 1000
	MaxShown   = 10
)

// A refused change's content was gone with the layer (trial38 F3): a CLAUDE.md the model drafted,
// or its whole version of a file the user edited meanwhile (a conflict), could not be looked at
// or taken by hand. Now the refused regular files are copied, before the layer is removed, into
// a directory of the call's own under Rules.Keep, named in the call's result and its audit line.
// Bounded: a call keeps at most KeepCallBytes in at most KeepCallFiles files (a file past what is
// left is not kept, and the result says how many were not), and each workspace's store (a
// directory of its own under Rules.Keep, WorkspaceKeepName) holds its last KeepCalls calls'
// directories (the oldest removed first), the whole store 250 calls and 256 MiB (the workspace
// holding the most pruned first, never a workspace's newest call: atk40b F6), so calls cannot
// fill serve's disk through it, nor one session's calls remove another workspace's drafts.
const (
	KeepCallBytes = 4 << 20
	KeepCallFiles = 256
	KeepCalls     = 50
)

// KeepRoot is where refused content is kept: $XDG_STATE_HOME/mcpsandbox/refused (or
// ~/.local/state/...), a store per workspace beneath it; "" (keep nothing) without a home.
func KeepRoot() string {
	base := xdg.Dir("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "mcpsandbox", "refused")
}

// keptText is the result's sentence about the kept content ("" for none).
func keptText(w *executor.WorkspaceChanges) string {
	switch {
	case w.KeptFiles == 0 && w.NotKept == 0:
		return ""
	case w.NotKept == 0:
		return fmt.Sprintf("; the refused files' content is kept for review in %s (%d file(s), not applied: copy what you want yourself)", w.Kept, w.KeptFiles)
	}
	why := w.NotKeptWhy
	if why == "" {
		why = fmt.Sprintf("past the bound of %d files, %d bytes a call, or the store unavailable", KeepCallFiles, KeepCallBytes)
	}
	if w.KeptFiles == 0 {
		return fmt.Sprintf("; the refused files' content was not kept (%d file(s): %s)", w.NotKept, why)
	}
	return fmt.Sprintf("; the refused files' content is kept for review in %s (%d file(s), not applied: copy what you want yourself; %d more not kept: %s)",
		w.Kept, w.KeptFiles, w.NotKept, why)
}

// Rules are what a commit checks.
type Rules struct {
	Protect []string // protect globs (policy syntax): unanchored ones match a name at any depth
	Quota   int64    // bytes of file content a call may leave behind (limits.workspace_quota)
	// UID and GID own committed entries when serve is root (the workspace's owner); -1 leaves
	// serve's own.
	UID, GID int
	// SandboxPath is the workspace's path as the program saw it: an absolute symlink target
	// under it stays inside the workspace.
	SandboxPath string
	// Extra, if set, says what else protects rel ("" = nothing): a scheme's own knowledge
	// (the allowlist's git set-up: core.hooksPath, included config files).
	Extra func(rel string) string
	// Deadline, if set, ends the commit: what is not applied by then is refused, listed.
	Deadline time.Time
	// Keep, if set, is the store refused files' content is kept in for review (KeepRoot).
	Keep string
}

// Layer is one call's layer over the workspace Lower: overlayfs needs Upper and Work on one
// filesystem; Dir holds both and is removed with them.
type Layer struct {
	Dir, Upper, Work, Lower string
	// Call is the id, in serve's audit log, of the call whose writes the layer holds: the
	// commit's journal names it, so a commit finished by the next serve closes that call.
	Call   string
	masked map[string]bool // paths hidden from the call (Mask): not deletions
	// userxattr: the overlay keeps its marks in user.overlay.* (a mount in a user namespace),
	// else in trusted.overlay.*, which only root can write. The commit reads only that
	// namespace: in trusted mode a user.overlay.opaque the program set is its own data.
	userxattr bool
	// since is when the call's program started (Start; else when the layer was made): what
	// another writer changed in the workspace after it is not overwritten or deleted by the
	// commit (a conflict, listed).
	since time.Time
	// tmp is the name the commit stages each file and link under in the workspace's root
	// (one at a time); a commit finished after its serve died reuses its journal's, so what a
	// killed commit was writing is removed.
	tmp         string
	sandboxPath string // the rules' SandboxPath, for the journal
	recovering  bool   // finishing a killed serve's commit (Recover): kept when it fails
}

// Start marks the moment the call's program starts. The program may not have seen what another
// writer (another session's call, write_file, the user's editor, another serve) changes in the
// workspace after it: the commit keeps such an entry rather than overwrite or delete it, and
// lists the conflict (attack round atk24c, F6). A layer made ahead of its call is started
// with the call; one never started counts from when it was made.
func (l *Layer) Start() { l.since = time.Now() }

// StartAt is Start from t, the moment serve accepted the call, for a scheme whose program starts
// long after (docker: a container made and started for the call, 1 to 2 s): an edit the user
// made in the workspace meanwhile, while their client showed the call running, is a conflict
// kept rather than overwritten without a word (trial36 F6). The program may have read it: the
// conflict is then one it could have merged, and is reported all the same.
func (l *Layer) StartAt(t time.Time) { l.since = t }

// OverlayOptions is the overlay mount's data. Redirects, index and metacopy are off so every
// change in the upper layer is a whole file, a whole directory or a whiteout (a renamed
// directory is copied by the program, as on two filesystems). userxattr is for a mount made
// inside a user namespace, where redirect_dir may not be named (its default there, nofollow,
// creates no redirects either).
func (l *Layer) OverlayOptions(userxattr bool) string {
	l.userxattr = userxattr
	o := fmt.Sprintf("lowerdir=%s,upperdir=%s,workdir=%s,index=off,metacopy=off",
		escapeOpt(l.Lower), escapeOpt(l.Upper), escapeOpt(l.Work))
	if userxattr {
		return o + ",userxattr"
	}
	return o + ",redirect_dir=off"
}

// escapeOpt escapes what overlayfs's option parser treats specially in a path.
func escapeOpt(p string) string { return optEscaper.Replace(p) }

// optEscaper is built once: a Replacer builds its tables at first use (6 KiB per call when it
// was made per call).
var optEscaper = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`)

// protector judges paths against the protect list.
type protector struct {
	pats  []protPat
	extra func(rel string) string
	// gitDirs are the directories (paths from the root, "" the root) that are git directories
	// by their content: gitHost ones already in the workspace (everything in them steers git),
	// gitMade ones only with this commit's entries (its HEAD, objects, refs, commondir there
	// are refused, so the directory stays an ordinary one).
	gitDirs map[string]int
	git     gitSetup // the git set-ups holding the workspace, and its links (Linux)
	// names and anchored are the literal patterns (no glob), unanchored and anchored
	names, anchored map[string]bool
}

// gitSetup is what the workspace as it is says about a path (from the root): what git's
// configuration names at or above it (match) or below it (below), the other paths links in
// the workspace give it (aliases), and the git directory by content it lies in (gitDirAt).
type gitSetup interface {
	match(rel string) string
	below(rel string) string
	aliases(rel string) []string
	gitDirAt(rel string) string
}

// maxAliases bounds the paths through links one judgement follows (links leading to links):
// past it the path is refused, judged as protected, rather than left unjudged.
const maxAliases = 256

// literal says whether a literal protect pattern names rel or a directory it is in: a map
// lookup per name, cheap enough for every link of a workspace.
func (p *protector) literal(rel string) bool {
	parts := strings.Split(fold(rel), "/")
	for i, part := range parts {
		if p.names[part] || p.anchored[strings.Join(parts[:i+1], "/")] {
			return true
		}
	}
	return false
}

type protPat struct {
	src      string
	anchored bool
	re       *regexp.Regexp
	segs     []*regexp.Regexp // an anchored pattern's path segments, for prefixOf
}

func newProtector(list []string) (*protector, error) {
	p := &protector{names: map[string]bool{}, anchored: map[string]bool{}}
	for _, g := range list {
		g = strings.Trim(g, "/")
		if g == "" {
			continue
		}
		if !strings.ContainsAny(g, "*?[\\") {
			if strings.Contains(g, "/") {
				p.anchored[fold(g)] = true
			} else {
				p.names[fold(g)] = true
			}
		}
		re, err := foldGlob(g)
		if err != nil {
			return nil, fmt.Errorf("protect pattern %q: %w", g, err)
		}
		pat := protPat{src: g, anchored: strings.Contains(g, "/"), re: re}
		if pat.anchored {
			for _, seg := range strings.Split(g, "/") {
				sre, err := foldGlob(seg)
				if err != nil {
					return nil, fmt.Errorf("protect pattern %q: %w", g, err)
				}
				pat.segs = append(pat.segs, sre)
			}
		}
		p.pats = append(p.pats, pat)
	}
	return p, nil
}

const (
	gitHost = 1 + iota
	gitMade
)

// gitMarkers are the entries that make a directory a git directory by its content.
var gitMarkers = map[string]bool{fold("HEAD"): true, fold("objects"): true, fold("refs"): true, fold("commondir"): true}

// Names are judged without regard to case (Unicode simple folding: ſ is s, the Kelvin sign is
// k): a workspace on a case-insensitive filesystem (WSL's /mnt/c, vfat, an ext4 casefold
// directory, as Steam's and Android's) has .VSCode/tasks.json, agents.md and .huſky/pre-commit
// mean .vscode/tasks.json, AGENTS.md and .husky/pre-commit, and the commit writes through the
// filesystem's lookup (attack round 16b). On a case-sensitive one this protects a few names
// that differ from a protected one only in case, which nobody relies on.

// fold is s with each rune replaced by the least of its case-folding orbit.
func fold(s string) string {
	if mutated("workspace-case-fold") {
		return s
	}
	return casefold.String(s)
}

// foldGlobs caches the case-insensitive form of each protect glob (a commit compiles the list).
var foldGlobs sync.Map

// foldGlob is the protect glob g compiled to match without regard to case.
func foldGlob(g string) (*regexp.Regexp, error) {
	re, err := policy.CompileGlob(g)
	if err != nil || mutated("workspace-case-fold") {
		return re, err
	}
	if c, ok := foldGlobs.Load(g); ok {
		return c.(*regexp.Regexp), nil
	}
	ci, err := regexp.Compile("(?i)" + re.String())
	if err != nil {
		return nil, err
	}
	foldGlobs.Store(g, ci)
	return ci, nil
}

// prefixOf says which anchored pattern rel is a proper prefix of ("" = none): a symlink at rel
// would move what the pattern protects (.config -> elsewhere makes .config/systemd elsewhere).
func (p *protector) prefixOf(rel string) string {
	if rel == "" || rel == "." {
		return ""
	}
	parts := strings.Split(rel, "/")
	for _, q := range p.pats {
		if len(q.segs) <= len(parts) {
			continue
		}
		ok := true
		for i, part := range parts {
			if !q.segs[i].MatchString(part) {
				ok = false
				break
			}
		}
		if ok {
			return q.src
		}
	}
	if p.git != nil {
		return p.git.below(rel)
	}
	return ""
}

// match says which pattern protects rel (a slash path from the workspace root) or one of the
// directories it is in, or "".
func (p *protector) match(rel string) string {
	if mutated("workspace-commit-check") {
		return ""
	}
	budget := maxAliases
	return p.matchVia(rel, 0, &budget)
}

// matchVia is match of rel, and of the paths links in the workspace give it: writing the file a
// link leads to writes what the link's name means (.git/hooks/pre-commit ->
// ../../scripts/pre-commit.sh makes scripts/pre-commit.sh a hook). depth counts the links
// followed so far; budget bounds the paths looked at.
func (p *protector) matchVia(rel string, depth int, budget *int) string {
	if why := p.matchOne(rel); why != "" {
		return why
	}
	if p.git == nil || depth >= 4 {
		return ""
	}
	for _, a := range p.git.aliases(rel) {
		if *budget--; *budget < 0 {
			return fmt.Sprintf("reached through more than %d links in the workspace: not judged, so not applied", maxAliases)
		}
		why := p.git.gitDirAt(a)
		if why != "" {
			why = "a git directory by its content (HEAD, objects, refs): " + strconv.Quote("/"+why)
		} else {
			why = p.matchVia(a, depth+1, budget)
		}
		if why != "" {
			return fmt.Sprintf("it is also %q, through a link in the workspace: %s", a, why)
		}
	}
	return ""
}

// matchOne is match of rel as written.
func (p *protector) matchOne(rel string) string {
	parts := strings.Split(rel, "/")
	for i := range parts {
		d := strings.Join(parts[:i], "/")
		switch p.gitDirs[d] {
		case gitHost:
			return "a git directory by its content (HEAD, objects, refs): " + strconv.Quote("/"+d)
		case gitMade:
			if gitMarkers[fold(parts[i])] {
				return "would make " + strconv.Quote("/"+d) + " a git directory by its content (HEAD, objects, refs)"
			}
		}
	}
	if why := p.pattern(rel); why != "" {
		return why
	}
	if p.git != nil {
		if why := p.git.match(rel); why != "" {
			return why
		}
	}
	if p.extra != nil {
		return p.extra(rel)
	}
	return ""
}

// pattern says which protect pattern matches rel or a directory it is in ("" = none).
func (p *protector) pattern(rel string) string {
	parts := strings.Split(rel, "/")
	for i := range parts {
		prefix := strings.Join(parts[:i+1], "/")
		for _, q := range p.pats {
			if q.anchored && q.re.MatchString(prefix) || !q.anchored && q.re.MatchString(parts[i]) {
				return q.src
			}
		}
	}
	return ""
}

// Recovered is a commit Recover finished: the changes it applied and refused, or why it could not.
type Recovered struct {
	Call    string // the call's id in the audit log, as its journal names it
	Layer   string // the layer's directory
	PID     int    // the serve that died in it
	Since   time.Time
	Changes *executor.WorkspaceChanges
	Err     error
}

// Recoveries keeps what Recover did for serve's audit (executor.Recoverer), handed over once.
type Recoveries struct {
	mu   sync.Mutex
	list []executor.Recovery
}

// Add keeps rs.
func (k *Recoveries) Add(rs []Recovered) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, r := range rs {
		rec := executor.Recovery{Call: r.Call, PID: r.PID, Since: r.Since, Changes: r.Changes}
		if r.Err != nil {
			rec.Err = r.Err.Error()
		}
		k.list = append(k.list, rec)
	}
}

// Take hands over what was kept, once.
func (k *Recoveries) Take() []executor.Recovery {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.list
	k.list = nil
	return out
}

// LogRecovered says what Recover did, one warning per commit: the client whose call it was got
// no answer, so serve's log is where the user learns what reached the workspace.
func LogRecovered(log *slog.Logger, rs []Recovered) {
	for _, r := range rs {
		if r.Err != nil {
			log.Warn("a serve died while applying a call's changes to the workspace, and finishing them failed (tried again at the next start)",
				"layer", r.Layer, "err", r.Err)
			continue
		}
		log.Warn("a serve died while applying a call's changes to the workspace: they are applied now, checked as at first",
			"layer", r.Layer, "changes", Summary(r.Changes))
	}
}

// Summary renders the changes for the call's text result ("" when there is nothing to say).
func Summary(w *executor.WorkspaceChanges) string {
	if w == nil {
		return ""
	}
	var b strings.Builder
	switch {
	case w.Discarded != "":
		fmt.Fprintf(&b, "workspace: none of this call's writes were applied: %s", w.Discarded)
	case w.Committed == 0 && len(w.Refused) == 0:
		return ""
	default:
		fmt.Fprintf(&b, "workspace: %d change(s) applied (%d bytes written)", w.Committed, w.Bytes)
		appliedText(&b, w)
	}
	if len(w.Restored) > 0 {
		fmt.Fprintf(&b, "; %d written back though gone from the workspace when the call ended (another writer may have "+
			"deleted or renamed them meanwhile, which serve could not tell from the call's own move; a serve that is not root has no file handles to tell them by):",
			len(w.Restored)+w.RestoredMore)
		for i, r := range w.Restored {
			if i == 20 {
				fmt.Fprintf(&b, "\n  … and %d more", len(w.Restored)+w.RestoredMore-i)
				break
			}
			fmt.Fprintf(&b, "\n  %q", r)
		}
	}
	if len(w.Refused) > 0 {
		fmt.Fprintf(&b, "; %d not applied:", len(w.Refused)+w.RefusedMore)
		for i, r := range w.Refused {
			if i == 20 {
				fmt.Fprintf(&b, "\n  … and %d more", len(w.Refused)-i)
				break
			}
			fmt.Fprintf(&b, "\n  %q: %s", r.Path, r.Why)
		}
		b.WriteString(keptText(w))
	}
	return b.String()
}

// appliedText names the first MaxShown applied changes (deletions come first in the list), then
// counts the rest, saying how many of them are deletions: ": deleted calc.go; wrote build/a.o;
// made build/".
func appliedText(b *strings.Builder, w *executor.WorkspaceChanges) {
	if len(w.Applied) == 0 {
		return
	}
	deleted := 0
	for i, ch := range w.Applied {
		if i == MaxShown {
			break
		}
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		b.WriteString(sep)
		name := shownName(ch.Path)
		switch ch.Op {
		case executor.OpDelete:
			deleted++
			b.WriteString("deleted " + name)
		case executor.OpMkdir:
			b.WriteString("made " + name + "/")
		case executor.OpLink:
			b.WriteString("linked " + name)
		default:
			b.WriteString("wrote " + name)
		}
	}
	rest := w.Committed - min(len(w.Applied), MaxShown)
	if rest <= 0 {
		return
	}
	fmt.Fprintf(b, "; and %d more", rest)
	if d := w.Deleted - deleted; d > 0 {
		fmt.Fprintf(b, " (%d of them deletions)", d)
	}
	fmt.Fprintf(b, ", listed in the structured result's workspace.applied (the first %d)", MaxApplied)
}

// shownName is a path as the summary names it: visible.Name, and quoted when it holds the
// list's separator, so a name cannot read as two changes ("a; deleted calc.go").
func shownName(p string) string {
	s := visible.Name(p)
	if s == p && strings.ContainsAny(p, ";") {
		return strconv.Quote(p)
	}
	return s
}

// inside says whether a symlink at rel with target stays in the workspace, judged on the text
// of the target (the host has not followed it yet): relative targets may not climb out, and
// absolute ones must lie under the workspace as the program saw it. It returns the target's
// path relative to the workspace root.
func inside(rel, target, sandboxPath string) (string, bool) {
	if target == "" || len(target) > 4096 {
		return "", false
	}
	// ".." only at the start of a relative target: a ".." after a name climbs out of whatever
	// that name resolves to, and a name may be a link (y -> ., then y/y/../../x climbs above the
	// root while its text reads as inside)
	leading := !path.IsAbs(target)
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "", ".":
		case "..":
			if !leading {
				return "", false
			}
		default:
			leading = false
		}
	}
	var t string
	if path.IsAbs(target) {
		if sandboxPath == "" {
			return "", false
		}
		t = path.Clean(target)
		root := path.Clean(sandboxPath)
		if t != root && !strings.HasPrefix(t, root+"/") {
			return "", false
		}
		t = strings.TrimPrefix(strings.TrimPrefix(t, root), "/")
		if t == "" {
			t = "."
		}
		return t, true
	}
	t = path.Clean(path.Join(path.Dir(rel), target))
	if t == ".." || strings.HasPrefix(t, "../") {
		return "", false
	}
	return t, true
}
