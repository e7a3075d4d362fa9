package wslayer

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// Supported says whether this build can make layers (Linux only).
const Supported = true

// Root is the private directory holding every call's layer: /var/tmp/mcpsandbox-layers-<uid>
// (on disk, not a tmpfs in memory: the quota, not the RAM, bounds a layer), 0700 and serve's
// own. One someone else made or opened up is not used: a fresh private one is made beside it.
// Layers a killed serve left behind (its process is gone; for a name that carries no process,
// older than an hour) are removed.
func Root() (string, error) {
	base := "/var/tmp"
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "mcpsandbox-layers-"+strconv.Itoa(os.Geteuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("create the workspace layers' directory %s: %w", dir, err)
	}
	if !private(dir) {
		d, err := os.MkdirTemp(base, "mcpsandbox-layers-")
		if err != nil {
			return "", fmt.Errorf("%s is not serve's own private directory, and a fresh one could not be made: %w", dir, err)
		}
		dir = d
	}
	sweep(dir)
	return dir, nil
}

// sweep removes from the layer root dir the layers no serve will commit or remove.
func sweep(dir string) {
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			// A layer whose serve lives is never removed here, however old: a serve idle for an
			// hour keeps its layers made ahead, and a call may still be using one (attack round
			// atk24c, F8: another serve's start removed a live serve's layers, and a running
			// call's writes with them). Only what names no serve goes by its age.
			if strings.HasPrefix(e.Name(), madePrefix) {
				continue // serve's record of what calls made in a workspace (madeStore), not a layer
			}
			gone, named := layerOwnerGone(dir, e.Name())
			if gone && unfinished(filepath.Join(dir, e.Name())) {
				continue // a commit its serve died in: the next serve of its workspace finishes it (Recover)
			}
			if info, err := e.Info(); err == nil && (gone || !named && time.Since(info.ModTime()) > time.Hour ||
				mutated("layers-swept-by-age") && time.Since(info.ModTime()) > time.Hour) {
				_ = removeAll(filepath.Join(dir, e.Name()))
			}
		}
	}
}

// journalName is the file in a layer's directory that says its commit is in progress.
const journalName = "commit.json"

// journalKeep is how long a commit its serve died in waits for a serve of its workspace to
// finish it (Recover); after that the layer is swept like any other.
const journalKeep = 7 * 24 * time.Hour

// journal is what finishing a commit needs beyond the layer and the recovering serve's rules:
// what the program saw as the workspace, and what the first commit staged under.
type journal struct {
	Workspace   string   `json:"workspace"`
	SandboxPath string   `json:"sandbox_path"`
	Since       int64    `json:"since_unix_nano"`
	Tmp         string   `json:"tmp"`
	UserXattr   bool     `json:"userxattr"`
	Masked      []string `json:"masked,omitempty"`
	Owner       string   `json:"owner,omitempty"` // processID of the serve committing
	Call        string   `json:"call,omitempty"`  // the call's id in the audit log
}

func (l *Layer) writeJournal() error {
	if mutated("commit-journal-off") {
		return nil
	}
	j := journal{Workspace: l.Lower, SandboxPath: l.sandboxPath, Since: l.since.UnixNano(), Tmp: l.tmp, UserXattr: l.userxattr,
		Owner: selfID(), Call: l.Call}
	for rel := range l.masked {
		j.Masked = append(j.Masked, rel)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	// whole or not at all: renamed into place
	tmp := filepath.Join(l.Dir, journalName+".new")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(l.Dir, journalName))
}

func readJournal(dir string) (journal, error) {
	var j journal
	f, err := os.Open(filepath.Join(dir, journalName))
	if err != nil {
		return j, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return j, err
	}
	err = json.Unmarshal(b, &j)
	if err == nil && (!filepath.IsAbs(j.Workspace) || !strings.HasPrefix(j.Tmp, stagePrefix) || strings.Contains(j.Tmp, "/")) {
		err = errors.New("not a journal serve wrote")
	}
	return j, err
}

// unfinished: the layer dir holds the journal of a commit that did not end, recent enough to
// finish, for a workspace that is still there.
func unfinished(dir string) bool {
	info, err := os.Stat(filepath.Join(dir, journalName))
	if err != nil || time.Since(info.ModTime()) > journalKeep {
		return false
	}
	j, err := readJournal(dir)
	if err != nil {
		return false
	}
	_, err = os.Stat(j.Workspace)
	return err == nil
}

// Recover finishes the commits to workspace ws that serves died in (killed by SIGKILL or the
// OOM killer, a crash): each such layer, left under root with its journal, is applied again
// with the rules the serve's scheme gives now (asked for only when there is one), checked as at first. What the first commit applied is found as it left it (a
// file of the same content, a link to the same target, a deletion done) and counted, not
// written twice; what another writer changed since the call started is a conflict, kept. The
// staging file the killed commit was writing is removed. A serve calls it once its layers work,
// before its first call; the journal of another workspace is left for a serve of that one.
func Recover(root, ws string, rules func() (Rules, error)) []Recovered {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []Recovered
	for _, e := range ents {
		dir := filepath.Join(root, e.Name())
		if gone, _ := layerOwnerGone(root, e.Name()); !gone {
			continue
		}
		j, err := readJournal(dir)
		if err != nil || filepath.Clean(j.Workspace) != filepath.Clean(ws) {
			continue
		}
		// claimed by a rename: one of two serves starting together finishes it, and the layer
		// now names a live serve (this one), so no sweep removes it meanwhile
		_, suffix, _ := strings.Cut(strings.TrimPrefix(e.Name(), "call-"), "-")
		suffix = strings.TrimPrefix(suffix, "recover-")
		mine := filepath.Join(root, fmt.Sprintf("call-%d-recover-%s", os.Getpid(), suffix))
		if err := os.Rename(dir, mine); err != nil {
			continue
		}
		pidText, _, _ := strings.Cut(strings.TrimPrefix(e.Name(), "call-"), "-")
		dead, _ := strconv.Atoi(pidText)
		since := time.Unix(0, j.Since)
		l := &Layer{Dir: mine, Upper: filepath.Join(mine, "upper"), Work: filepath.Join(mine, "work"), Lower: ws,
			since: time.Unix(0, j.Since), tmp: j.Tmp, userxattr: j.UserXattr, masked: map[string]bool{}, sandboxPath: j.SandboxPath,
			recovering: true, Call: j.Call}
		for _, rel := range j.Masked {
			l.masked[rel] = true
		}
		rr, err := rules()
		if err != nil {
			out = append(out, Recovered{Call: j.Call, Layer: mine, PID: dead, Since: since, Err: err})
			continue
		}
		if filepath.IsAbs(j.SandboxPath) {
			rr.SandboxPath = j.SandboxPath // as the program saw it (/workspace in a container)
		}
		ch, err := l.Commit(rr)
		if err != nil {
			out = append(out, Recovered{Call: j.Call, Layer: mine, PID: dead, Since: since, Err: err})
			continue // the layer stays, journal and all, for the next try
		}
		out = append(out, Recovered{Call: j.Call, Layer: dir, PID: dead, Since: since, Changes: ch})
	}
	return out
}

// ownerGone: a layer's name carries the pid of the serve that made it ("call-PID-…"; named);
// gone says that process is gone (killed mid-call), so nothing will commit or remove it.
func ownerGone(name string) (gone, named bool) {
	rest, ok := strings.CutPrefix(name, "call-")
	if !ok {
		return false, false
	}
	pidText, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid <= 0 {
		return false, false
	}
	return errors.Is(unix.Kill(pid, 0), unix.ESRCH), true
}

// layerOwnerGone is ownerGone, and for a layer with a journal also whether the process its pid
// names now is another (the pid reused, after a reboot too): the journal names its serve by
// boot and start time (attack round atk25a, N3: a reused pid kept a dead serve's commit
// unfinished, and its layer unswept, for as long as the other process lived).
func layerOwnerGone(root, name string) (gone, named bool) {
	gone, named = ownerGone(name)
	if gone || !named {
		return gone, named
	}
	j, err := readJournal(filepath.Join(root, name))
	if err != nil || j.Owner == "" {
		return false, true
	}
	rest, _ := strings.CutPrefix(name, "call-")
	pidText, _, _ := strings.Cut(rest, "-")
	pid, _ := strconv.Atoi(pidText)
	now := processID(pid)
	// unknown now (its /proc unreadable a moment): alive, as its pid says; never taken from a
	// live serve in the middle of its commit
	return now != "" && j.Owner != now && !mutated("journal-owner-by-pid"), true
}

// processID names process pid for as long as it lives, and no other: the machine's boot and the
// process's start time (clock ticks since boot: /proc/PID/stat's 22nd field). "" if unknown.
func processID(pid int) string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + f[19]
}

// selfID is this process's processID, read once.
var selfID = sync.OnceValue(func() string { return processID(os.Getpid()) })

// private: a directory (not a link), serve's own, closed to everyone else.
func private(dir string) bool {
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR && int(st.Uid) == os.Geteuid() && st.Mode&0o077 == 0
}

// New makes a call's layer under root over the workspace lower. The upper directory gets
// lower's mode (and, when serve is root, its owner): the merged root directory takes the
// upper's attributes, so the program may write where it could write before, and no more.
func New(root, lower string) (*Layer, error) {
	var st unix.Stat_t
	if err := unix.Stat(lower, &st); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", lower, err)
	}
	dir, err := os.MkdirTemp(root, fmt.Sprintf("call-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("create the call's workspace layer: %w", err)
	}
	l := &Layer{Dir: dir, Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work"), Lower: lower, since: time.Now()}
	for _, d := range []string{l.Upper, l.Work} {
		if err := os.Mkdir(d, 0o700); err != nil {
			_ = l.Remove()
			return nil, fmt.Errorf("create the call's workspace layer: %w", err)
		}
	}
	if os.Geteuid() == 0 {
		_ = os.Lchown(l.Upper, int(st.Uid), int(st.Gid))
	}
	if err := os.Chmod(l.Upper, fs.FileMode(st.Mode&0o777)); err != nil {
		_ = l.Remove()
		return nil, fmt.Errorf("create the call's workspace layer: %w", err)
	}
	// others (the engine mounting a container's layer) may need to traverse Dir, never list it
	_ = os.Chmod(dir, 0o711)
	return l, nil
}

// Mask hides workspace files from the call (each rel is a path from the workspace root): the
// call sees no such file, and the hiding is not a deletion the commit applies. The allowlist
// hides the files the host hard-linked into the workspace from an interpreter's call: another
// name of such a file may lie outside the workspace, and no argument names it for a check.
func (l *Layer) Mask(rels []string) error {
	if l.masked == nil {
		l.masked = map[string]bool{}
	}
	for _, rel := range rels {
		rel = path.Clean(rel)
		if rel == "." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
			continue
		}
		if err := l.mirrorDirs(path.Dir(rel)); err != nil {
			return err
		}
		// an overlayfs whiteout: a character device 0/0
		if err := unix.Mknod(filepath.Join(l.Upper, filepath.FromSlash(rel)), unix.S_IFCHR, 0); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("hide %s from the call: %w", rel, err)
		}
		l.masked[rel] = true
	}
	return nil
}

// mirrorDirs makes the upper layer's directories down to rel, each with the workspace
// directory's mode and owner (a merged directory takes its upper's attributes).
func (l *Layer) mirrorDirs(rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	if err := l.mirrorDirs(path.Dir(rel)); err != nil {
		return err
	}
	up := filepath.Join(l.Upper, filepath.FromSlash(rel))
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(l.Lower, filepath.FromSlash(rel)), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("hide files under %s from the call: not a directory of the workspace", rel)
	}
	if err := os.Mkdir(up, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("hide files under %s from the call: %w", rel, err)
	}
	if os.Geteuid() == 0 {
		_ = os.Lchown(up, int(st.Uid), int(st.Gid))
	}
	return unix.Chmod(up, st.Mode&0o7777)
}

// Remove removes the layer (the overlay must be unmounted: its processes are gone).
func (l *Layer) Remove() error { return removeAll(l.Dir) }

// removing counts the layers an empty commit left to be removed in the background.
var removing sync.WaitGroup

func (l *Layer) removeLater() {
	removing.Add(1)
	go func() {
		defer removing.Done()
		_ = l.Remove()
	}()
}

// WaitRemoved waits until every layer an empty commit left to the background is removed (an
// executor's Close: a serve that stops leaves no layer behind; one killed leaves it to the next
// serve's sweep, Root).
func WaitRemoved() { removing.Wait() }

// purger removes what serve's user cannot in a layer directory, when a scheme set one: where
// the engine mounts the layers (docker), the kernel makes overlayfs's work/work for the engine's
// user, root, mode 0, and keeps a whiteout in it after a call deletes a file (trial37 F4).
var purger atomic.Pointer[func(dir string)]

// SetPurger makes f the purger: it is given each layer directory removeAll could not remove,
// and removes it (or says why not). The returned func unsets it, if it is still f.
func SetPurger(f func(dir string)) (unset func()) {
	p := &f
	purger.Store(p)
	return func() { purger.CompareAndSwap(p, nil) }
}

// removeAll is os.RemoveAll after making overlayfs's work directory (mode 0) removable; what
// serve's user still cannot remove goes to the purger.
func removeAll(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if fd, err := reopenClosedDir(unix.AT_FDCWD, p); err == nil {
				unix.Close(fd)
			}
		}
		return nil
	})
	err := os.RemoveAll(dir)
	if p := purger.Load(); err != nil && p != nil {
		(*p)(dir)
	}
	return err
}

// reopenClosedDir gives serve's user (the directory's owner) its permissions on the directory
// name in dir again (a call may close one to serve: mode 0) and opens it. A name is never
// chmodded as a name: a call still running can swap a symbolic link in for it between a stat
// and a chmod, which would follow the link out of the layer (attack round atk33, F10: serve
// as a user chmodded a file of that user's outside the workspace). The name is opened
// O_PATH|O_NOFOLLOW|O_DIRECTORY (a link there fails), and that inode is chmodded and
// opened through the descriptor.
func reopenClosedDir(dir int, name string) (int, error) {
	if mutated("workspace-layer-chmod-follows") {
		_ = unix.Fchmodat(dir, name, 0o700, 0)
		return openDir(dir, name)
	}
	pfd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	self := "/proc/self/fd/" + strconv.Itoa(pfd) // the descriptor's inode, whatever the name is now
	if err := unix.Chmod(self, 0o700); err != nil {
		return -1, err
	}
	return unix.Open(self, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// Size is what the upper layer holds now, counted up to limit+1 (a watchdog asks whether a
// running call passed the quota; it need not count past it): for every entry the larger of its
// size and its allocated blocks (a file fallocated past its size holds disk all the same). It
// walks by descriptor, so no path is too long, and a directory the call closed to serve
// (mode 0) is opened to serve's user again, which owns it: nothing the call does hides bytes.
// What it cannot measure counts as over the limit (limit+1): a layer of more than
// MaxLayerEntries entries, a directory with entries nested deeper than 4*MaxDepth (bytes
// there would be hidden from the watchdog; the commit applies nothing that deep anyway), or a
// directory it cannot open or list whole (out of descriptors or memory, an I/O error).
func (l *Layer) Size(limit int64) int64 {
	n, _ := l.measure(limit)
	return n
}

// measure is Size, and whether the layer was measured: false when a listing, a directory or
// the bounds stopped the walk (n is then limit+1, taken as over).
func (l *Layer) measure(limit int64) (int64, bool) {
	var n int64
	unmeasured := false
	entries := 0
	fd, err := openDir(unix.AT_FDCWD, l.Upper)
	if errors.Is(err, unix.ENOENT) || err != nil && mutated("workspace-layer-unmeasured") {
		return 0, true // removed: it holds nothing
	}
	if err != nil {
		return limit + 1, false
	}
	var walk func(dir, depth int)
	walk = func(dir, depth int) {
		list, err := readNames(dir)
		if err != nil && !mutated("workspace-layer-unmeasured") {
			n, unmeasured = limit+1, true // a listing cut short (EMFILE, ENOMEM, EIO) hides what it did not list
			return
		}
		for _, name := range list {
			if n > limit {
				return
			}
			if entries++; entries > MaxLayerEntries && !mutated("workspace-layer-unmeasured") {
				n, unmeasured = limit+1, true
				return
			}
			var st unix.Stat_t
			if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			n += max(st.Size, st.Blocks*512)
			if st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			if depth >= 4*MaxDepth {
				if !mutated("workspace-layer-unmeasured") {
					n, unmeasured = limit+1, true // what lies below is not measured: taken as over
					return
				}
				continue
			}
			sub, err := openDir(dir, name)
			if errors.Is(err, unix.EACCES) {
				sub, err = reopenClosedDir(dir, name)
			}
			switch {
			case err == nil:
				walk(sub, depth+1)
				unix.Close(sub)
			case errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR):
				// removed or replaced since its stat: measured where it is now, at the next look
			case !mutated("workspace-layer-unmeasured"):
				n, unmeasured = limit+1, true // a directory it cannot open (EMFILE, EACCES as root): taken as over
				return
			}
		}
	}
	walk(fd, 0)
	unix.Close(fd)
	if mutated("workspace-quota") {
		return 0, true
	}
	return n, !unmeasured
}

// Discard removes the layer unapplied and says why.
func (l *Layer) Discard(why string) *executor.WorkspaceChanges {
	_ = l.Remove()
	return &executor.WorkspaceChanges{Discarded: why}
}

// Commit applies the upper layer's changes to the workspace, each checked, and removes the
// layer. An error means the commit could not look at the layer at all; a change it refuses is
// listed in the result, with the rule.
func (l *Layer) Commit(r Rules) (_ *executor.WorkspaceChanges, err error) {
	if l.empty() {
		// Nothing to apply, so nothing to judge: the git set-up (which runs git on the
		// user's and the system's config) and the workspace's lock are for changes. Nothing
		// to keep either: the layer is removed off the call's path (a third of an empty
		// commit's time), under serve's private layer root.
		l.removeLater()
		return &executor.WorkspaceChanges{}, nil
	}
	defer func() {
		if err == nil || !l.recovering {
			_ = l.Remove()
		}
	}()
	// One commit at a time per workspace: each judges its changes on the workspace as it is
	// (a git directory made of HEAD from one call and objects/, refs/ from another is seen by
	// whichever commits second), so two must not judge the same state at once.
	if !mutated("workspace-commit-serial") {
		mu := workspaceLock(l.Lower)
		mu.Lock()
		defer mu.Unlock()
	}
	prot, err := newProtector(r.Protect)
	if err != nil {
		return nil, err
	}
	prot.extra = r.Extra
	g := newGitGuard(l.Lower)
	g.protected = prot.literal
	g.host = func(rel string) bool { return prot.pattern(rel) != "" }
	g.protectedLinks(r.Protect)
	prot.git = g
	if l.tmp == "" {
		l.tmp = tmpName()
	}
	l.sandboxPath = r.SandboxPath
	c := &committer{r: r, prot: prot, out: &executor.WorkspaceChanges{}, upperRoot: l.Upper, masked: l.masked, call: l.Call,
		userxattr: l.userxattr, deadline: r.Deadline, lower: l.Lower, tmp: l.tmp, layerRoot: filepath.Dir(l.Dir),
		chown: os.Geteuid() == 0 && r.UID >= 0}
	if !mutated("workspace-conflict-unchecked") {
		c.since = l.since.UnixNano()
	}
	up, err := openDir(unix.AT_FDCWD, l.Upper)
	if err != nil {
		return nil, fmt.Errorf("open the call's workspace layer: %w", err)
	}
	defer unix.Close(up)
	ws, err := openDir(unix.AT_FDCWD, l.Lower)
	if err != nil {
		return nil, fmt.Errorf("open the workspace %s to apply the call's changes: %w", l.Lower, err)
	}
	defer unix.Close(ws)
	if !mutated("workspace-commit-serial") {
		// and across processes: two serves (two clients' entries) may share a workspace
		if err := lockWorkspace(ws, r.Deadline); err != nil {
			return nil, fmt.Errorf("lock the workspace %s to apply the call's changes: %w", l.Lower, err)
		}
		defer unix.Flock(ws, unix.LOCK_UN)
	}
	if !l.recovering {
		if why := l.spaceShort(ws); why != "" {
			return l.Discard(why), nil
		}
	}
	c.wsRoot = ws
	c.rootMnt, _ = mountOf(ws)
	// under the lock: two serves of one user share the record
	c.made = loadMade(c.layerRoot, l.Lower, ws)
	g.madeSet = c.made.set()
	// Written before the first change and removed after the last: a serve killed in between
	// (SIGKILL, the OOM killer, a crash) leaves it, and the next serve of this workspace
	// finishes the commit (Recover) rather than leave a half-applied call (attack round
	// atk24c, F2).
	if err := l.writeJournal(); err != nil {
		return nil, fmt.Errorf("record the commit in progress under %s: %w (free space there?)", l.Dir, err)
	}
	if l.recovering {
		c.done = readApplied(l.Dir)
	}
	if err := c.openApplied(l.Dir); err != nil {
		return nil, fmt.Errorf("record the commit in progress under %s: %w (free space there?)", l.Dir, err)
	}
	defer c.closeApplied()
	c.recovering = l.recovering
	c.prepareGone(up, ws) // before anything is removed: a rename's old name is its evidence
	prot.gitDirs = c.gitDirs(up, ws, "", 0)
	c.dir(up, ws, "")
	c.saveMade()
	if l.recovering && c.late && !mutated("recover-late-finished") {
		// kept, journal and all: the next start goes on from what this one applied
		return nil, errors.New("finishing it ran out of time (limits.timeout): what is applied so far stays, and the next start goes on from there")
	}
	// before the layer's removal, which a kill may cut short: a journal beside half a layer
	// would have its commit finished again with part of its changes
	_ = os.Remove(filepath.Join(l.Dir, journalName))
	c.finish()
	c.kept.done(c.out)
	return c.out, nil
}

// spaceShort says why nothing of the layer is applied when the workspace's file system has less
// room than the layer holds (each file is written whole beside its old version, then renamed),
// or "". Applied file by file, a full disk took some of a call's files and not others, with
// the call's exit code 0 (trial39 F12); refused whole, the workspace stays as it was and the
// result says what is needed. Another writer filling the disk meanwhile can still cut a commit
// short: what was not written is named, as before.
func (l *Layer) spaceShort(ws int) string {
	if mutated("workspace-space-unchecked") {
		return ""
	}
	var fs unix.Statfs_t
	if unix.Fstatfs(ws, &fs) != nil {
		return ""
	}
	free := int64(fs.Bavail) * fs.Bsize
	if os.Geteuid() == 0 {
		free = int64(fs.Bfree) * fs.Bsize // root writes into the reserved blocks too
	}
	if n, whole := l.measure(free); n <= free || !whole { // stops once past free
		return "" // fits, or not measured (out of descriptors): judged file by file as before
	}
	need, whole := l.measure(1 << 50)
	if !whole {
		return ""
	}
	return fmt.Sprintf("the call's changes need about %s and the workspace's file system has %s free, so the workspace is left as it was before the call; free space there, then run the call again",
		byteSize(need), byteSize(free))
}

// byteSize is n bytes for a person: 1.5 MB, 300 kB, 12 bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1<<10:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}

// appliedName is the file in a layer's directory that lists, as the commit goes, each change
// it has applied (paths from the root, NUL-terminated): finishing the commit after its serve
// died skips them, so what the user undid after the kill (a file the killed commit made and
// the user deleted) is not done again (attack round atk25a, F2).
const appliedName = "applied"

// maxApplied bounds what readApplied reads: MaxEntries paths of MaxDepth names.
const maxApplied = 64 << 20

func (c *committer) openApplied(dir string) error {
	if mutated("commit-progress-unlogged") {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(dir, appliedName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	c.applog = f
	return err
}

func (c *committer) closeApplied() {
	if c.applog != nil {
		_ = c.applog.Close()
	}
}

// readApplied is the set of changes a killed commit's log says it applied.
func readApplied(dir string) map[string]bool {
	f, err := os.Open(filepath.Join(dir, appliedName))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxApplied))
	done := map[string]bool{}
	for len(b) > 0 {
		rel, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			break // cut short by the kill: not applied for certain
		}
		done[string(rel)] = true
		b = rest
	}
	return done
}

// replayed: finishing a killed serve's commit, rel is a change that commit applied: counted
// and named as ch, not done again (whatever the user did to it since is theirs).
func (c *committer) replayed(rel string, ch executor.AppliedChange) bool {
	if !c.done[rel] {
		return false
	}
	c.out.Committed++
	c.record(rel, ch)
	return true
}

// lockWait bounds the wait for the workspace's lock when the commit has no deadline of its own.
const lockWait = 30 * time.Second

// lockWorkspace takes the lock two serves sharing the workspace order their commits with (flock
// on its directory), waiting at most until deadline. Any local user who can open the directory
// can hold that lock: waited for with no bound, it held every commit, each call's slot with it,
// and serve's exit (attack round atk24c, F1).
func lockWorkspace(ws int, deadline time.Time) error {
	if mutated("workspace-lock-unbounded") {
		return unix.Flock(ws, unix.LOCK_EX)
	}
	if deadline.IsZero() {
		deadline = time.Now().Add(lockWait)
	}
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		err := unix.Flock(ws, unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EWOULDBLOCK && err != unix.EINTR {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return errors.New("another process has held its lock (flock on the directory) past the call's time: another serve applying its calls' changes, or a process holding the lock; nothing of this call was applied (see `fuser -v` on the workspace for who holds it)")
		}
		time.Sleep(pause)
	}
}

// empty says whether the upper layer is an empty directory: the call changed nothing in the
// workspace (a write, a deletion's whiteout, a masked file all leave an entry there; the
// layer's root directory itself is never applied). Anything it cannot read is not empty.
func (l *Layer) empty() bool {
	if mutated("workspace-empty-commit") {
		return false
	}
	fd, err := openDir(unix.AT_FDCWD, l.Upper)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "upper")
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

var (
	locksMu sync.Mutex
	locks   = map[string]*sync.Mutex{}
)

// workspaceLock is the lock of commits to the workspace ws (one per workspace this process
// commits to: a handful).
func workspaceLock(ws string) *sync.Mutex {
	locksMu.Lock()
	defer locksMu.Unlock()
	mu, ok := locks[ws]
	if !ok {
		mu = &sync.Mutex{}
		locks[ws] = mu
	}
	return mu
}

type committer struct {
	r         Rules
	prot      *protector
	out       *executor.WorkspaceChanges
	charged   int64 // what the applied changes cost against the quota (fileCharge, dirCharge)
	upperRoot string
	// layerRoot holds serve's record of the directories calls made where the workspace keeps
	// no user xattrs (made_linux.go); made is that record as this commit holds it, madeNow
	// the directories this commit made
	layerRoot string
	made      *madeRecord
	madeNow   map[string]bool
	chown     bool
	entries   int
	wsRoot    int
	masked    map[string]bool
	userxattr bool
	lower     string
	deadline  time.Time
	late      bool
	rootMnt   uint64 // the mount the workspace's root is on
	since     int64  // the call's start (Unix ns): an entry changed later is another writer's
	tmp       string // the name files and links are staged under, beside their destination
	applied   int    // entries written or removed (commitEntryHook)
	// touched are the inodes (dev, ino) whose names this commit replaced or removed: doing so
	// sets the change time of each of their other names (hard links), which is not another
	// writer's change (attack round atk25a, F1)
	touched    map[[2]uint64]bool
	applog     *os.File        // the applied-changes log (appliedName)
	done       map[string]bool // finishing a killed commit: what it applied
	recovering bool
	gone       map[string]bool // layer entries another writer deleted in the workspace (prepareGone)
	judged     bool            // prepareGone compared the marks' handles with the workspace's
	// restoredDirs are the entries unjudgedGone found (what lies beneath one is not named)
	restoredDirs map[string]bool
	movedFrom    map[string]bool // the content keys of files the call removed (removedContents)
	// the changes applied, named (record), each list at most MaxApplied: finish orders them
	// into out.Applied, deletions first
	deletes, writes, mkdirs []executor.AppliedChange
	call                    string  // the call's id (Layer.Call): its keep directory's name
	kept                    *keeper // the refused files' content kept for review (keep_linux.go)
}

// commitEntryHook, set by tests, runs after each entry the commit writes or removes, with their
// count so far: a test kills its process there, as the OOM killer might.
var commitEntryHook func(n int)

// did counts rel as applied, as the change ch (its path set here), in the commit's log.
func (c *committer) did(rel string, ch executor.AppliedChange) {
	c.out.Committed++
	c.record(rel, ch)
	c.applied++
	if c.applog != nil {
		_, _ = c.applog.WriteString(rel + "\x00")
	}
	if h := commitEntryHook; h != nil {
		h(c.applied)
	}
}

// record names the applied change ch at rel for the call's result and its audit line (trial37
// F8: "3 change(s) applied" hid the deletion of a tracked source file): kept while its list has
// room, deletions counted whether kept or not.
func (c *committer) record(rel string, ch executor.AppliedChange) {
	if ch.Op == executor.OpDelete {
		c.out.Deleted++
	}
	if mutated("workspace-applied-unnamed") {
		return
	}
	list := &c.writes
	switch ch.Op {
	case executor.OpDelete:
		list = &c.deletes
	case executor.OpMkdir:
		list = &c.mkdirs
	}
	if len(*list) < MaxApplied {
		ch.Path = clipText(rel)
		*list = append(*list, ch)
	}
}

// wantHash: a file written now would be named in the result, so its content's sha256 is worth
// computing as it is copied (past the list's bound it is counted only).
func (c *committer) wantHash() bool { return len(c.writes) < MaxApplied }

// finish puts the named changes in the result, deletions first (what a reviewer looks for),
// then files and links written, then directories made, at most MaxApplied; the rest counted.
func (c *committer) finish() {
	all := make([]executor.AppliedChange, 0, min(MaxApplied, len(c.deletes)+len(c.writes)+len(c.mkdirs)))
	order := [][]executor.AppliedChange{c.deletes, c.writes, c.mkdirs}
	if mutated("workspace-applied-deletions-last") {
		order = [][]executor.AppliedChange{c.writes, c.mkdirs, c.deletes}
	}
	for _, l := range order {
		all = append(all, l[:min(len(l), MaxApplied-len(all))]...)
	}
	if len(all) > 0 {
		c.out.Applied = all
	}
	c.out.AppliedMore = c.out.Committed - len(all)
}

// fileSHA is the sha256 (hex) of the n bytes of name in dir ("" when unreadable).
func fileSHA(dir int, name string, n int64) string {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	h := sha256.New()
	if m, err := io.Copy(h, io.LimitReader(f, n)); err != nil || m != n {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// changedSince: the workspace entry st (not a directory) was changed after the call started,
// by its inode's change time, which every write, rename, chmod and link count change sets (and
// nothing can set back). The program may not have seen it: overwriting or deleting it would
// lose another writer's work that writer was told was saved. The change time is the kernel's
// coarse clock (a tick: 1–10 ms by the kernel's HZ): a change in the tick the call started in may pass; one
// made before the call never counts.
func (c *committer) changedSince(st *unix.Stat_t) bool {
	return c.since != 0 && st.Mode&unix.S_IFMT != unix.S_IFDIR && st.Ctim.Nano() > c.since &&
		(!c.touched[[2]uint64{st.Dev, st.Ino}] || mutated("commit-own-links-conflict"))
}

// touch records that this commit replaced or removed a name of the inode st.
func (c *committer) touch(st *unix.Stat_t) {
	if st.Nlink < 2 {
		return // no other name to be judged later
	}
	if c.touched == nil {
		c.touched = map[[2]uint64]bool{}
	}
	c.touched[[2]uint64{st.Dev, st.Ino}] = true
}

const conflictWhy = executor.ConflictWhy

// sameFile: the workspace's regular file name in ws holds exactly the n bytes of the layer's
// name in up (another writer made the same; or a commit its killed serve began wrote it).
func sameFile(up, ws int, name string, n int64) bool {
	a, err := unix.Openat(up, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	fa := os.NewFile(uintptr(a), "layer")
	defer fa.Close()
	b, err := unix.Openat(ws, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	fb := os.NewFile(uintptr(b), "workspace")
	defer fb.Close()
	if st, err := fb.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() != n {
		return false
	}
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for n > 0 {
		k := int(min(n, int64(len(ba))))
		if _, err := io.ReadFull(fa, ba[:k]); err != nil {
			return false
		}
		if _, err := io.ReadFull(fb, bb[:k]); err != nil {
			return false
		}
		if !bytes.Equal(ba[:k], bb[:k]) {
			return false
		}
		n -= int64(k)
	}
	return true
}

// mountOf is the id of the mount the directory fd is on (statx, Linux 5.8); false when unknown.
func mountOf(fd int) (uint64, bool) {
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx) != nil || stx.Mask&unix.STATX_MNT_ID == 0 {
		return 0, false
	}
	return stx.Mnt_id, true
}

// otherMount: the workspace directory fd is on another mount than the workspace's root (a
// filesystem or bind mount the host put inside the workspace). The call's overlay showed the
// directory beneath the mount point, so its writes there were never meant for what is mounted:
// applying them would write, or for an opaque directory delete, another filesystem's files.
func (c *committer) otherMount(fd int) bool {
	if c.rootMnt == 0 || mutated("workspace-mount-point") {
		return false
	}
	id, ok := mountOf(fd)
	return ok && id != c.rootMnt
}

func (c *committer) refuse(rel, format string, a ...any) {
	if len(c.out.Refused) >= MaxRefused {
		c.out.RefusedMore++
		return
	}
	c.out.Refused = append(c.out.Refused, executor.RefusedChange{Path: clipText(rel), Why: clipText(fmt.Sprintf(format, a...))})
}

// clipText cuts s to MaxRefusedText bytes on a UTF-8 boundary, saying so.
func clipText(s string) string {
	if len(s) <= MaxRefusedText {
		return s
	}
	cut := MaxRefusedText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
}

func openDir(at int, name string) (int, error) {
	return unix.Openat(at, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// names lists a directory's entries, sorted (a stable report).
func names(fd int) []string {
	n, _ := readNames(fd)
	return n
}

// readNames is names with the error that cut the listing short, if any.
func readNames(fd int) ([]string, error) {
	// a dup shares the offset: start from the top, and leave it there for the next reader
	_, _ = unix.Seek(fd, 0, io.SeekStart)
	defer unix.Seek(fd, 0, io.SeekStart)
	d, err := unix.Dup(fd)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), "dir")
	defer f.Close()
	n, err := f.Readdirnames(-1)
	slices.Sort(n)
	return n, err
}

// dir applies the entries of the upper directory up to the workspace directory ws (rel is
// their path from the root).
func (c *committer) dir(up, ws int, rel string) {
	if c.recovering && !mutated("commit-staging-left") {
		_ = unix.Unlinkat(ws, c.tmp, 0) // what the killed commit was writing here, if anything
	}
	list, err := readNames(up)
	for _, name := range list {
		c.entry(up, ws, path.Join(rel, name), name)
	}
	if err != nil && !mutated("workspace-commit-listing") {
		// said, not silently dropped: the layer is removed after the commit
		c.refuse(cmp.Or(rel, "."), "its listing in the call's layer failed (%v): changes in it that were not listed are not applied", err)
	}
}

func (c *committer) entry(up, ws int, rel, name string) {
	if c.late || !c.deadline.IsZero() && c.entries%64 == 0 && time.Now().After(c.deadline) {
		if !c.late {
			c.late = true
			c.refuse(rel, "the commit ran out of time: this and what follows it are not applied")
		} else {
			c.out.RefusedMore++
		}
		return
	}
	c.entries++
	if c.entries > MaxEntries {
		if c.entries == MaxEntries+1 {
			c.refuse(rel, "the call changed more than %d entries: the rest are not applied", MaxEntries)
		}
		return
	}
	var st unix.Stat_t
	if err := unix.Fstatat(up, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		c.refuse(rel, "unreadable in the call's layer: %v", err)
		return
	}
	kind := st.Mode & unix.S_IFMT
	if kind == unix.S_IFCHR && st.Rdev == 0 { // an overlayfs whiteout: the program deleted it
		if c.masked[rel] {
			return // hidden from the call (Mask), not deleted by it
		}
		if what := c.prot.match(rel); what != "" {
			c.refuse(rel, "deleting it: protected (%q)", what)
			return
		}
		del := executor.AppliedChange{Op: executor.OpDelete}
		if c.replayed(rel, del) {
			return
		}
		if err := c.removeAt(ws, name, rel); err == nil {
			c.did(rel, del)
		}
		return
	}
	if strings.HasPrefix(name, stagePrefix) {
		// a call's own such file could take the name a commit stages under, which finishing a
		// killed commit removes (attack round atk25a, N4)
		c.refuse(rel, "a name beginning %q, which serve stages its commits under", stagePrefix)
		return
	}
	if what := c.prot.match(rel); what != "" {
		c.refuse(rel, "protected (%q): files that steer the host are never written by a call", what)
		c.keep(up, name, rel)
		return
	}
	if c.goneWhileRunning(ws, rel, name, kind == unix.S_IFDIR) {
		return
	}
	unjudged, before := c.unjudgedGone(up, ws, rel, name), c.out.Committed
	switch kind {
	case unix.S_IFDIR:
		c.commitDir(up, ws, rel, name, &st)
	case unix.S_IFREG:
		c.commitFile(up, ws, rel, name, &st)
	case unix.S_IFLNK:
		c.commitLink(up, ws, rel, name)
	default:
		c.refuse(rel, "a %s: only files, directories and links inside the workspace are applied", kindName(kind))
	}
	if unjudged && c.out.Committed > before {
		c.restored(rel)
	}
}

func kindName(k uint32) string {
	switch k {
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	}
	return "special file"
}

// gitDirs finds the directories (below up, the upper directory at rel, over ws) that are git
// directories by their content once the commit is applied: git takes a directory holding HEAD
// and objects/ and refs/ (or HEAD and commondir) for a repository, whatever its name, and runs
// its config (core.fsmonitor, hooks) for a git command run there. Judged on the union of the
// workspace and the layer, so files that make one only together (HEAD from the call beside a
// refs/ the workspace had, or the same written in two orders) are caught.
func (c *committer) gitDirs(up, ws int, rel string, depth int) map[string]int {
	out := map[string]int{}
	var walk func(up, ws int, rel string, depth int)
	walk = func(up, ws int, rel string, depth int) {
		// has says whether name is there after the commit, of any type (git follows links and
		// asks only that objects/ and refs/ be searchable: a link or an executable file will
		// do), and whether this commit brings it
		upNames := map[string]string{} // the layer's names by their folding (Head is HEAD on a case-insensitive workspace)
		for _, n := range names(up) {
			if _, ok := upNames[fold(n)]; !ok {
				upNames[fold(n)] = n
			}
		}
		has := func(name string) (there, made bool) {
			var st unix.Stat_t
			if n, ok := upNames[fold(name)]; ok && unix.Fstatat(up, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				if st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0 {
					return false, false // deleted by the call
				}
				return true, true
			}
			if ws < 0 || c.opaque(rel) || unix.Fstatat(ws, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				return false, false
			}
			return true, false
		}
		head, m1 := has("HEAD")
		common, m2 := has("commondir")
		objects, m3 := has("objects")
		refs, m4 := has("refs")
		if head && (common || objects && refs) {
			out[rel] = gitHost
			if m1 || m2 && common || m3 && !common || m4 && !common {
				out[rel] = gitMade
			}
		}
		// a git directory the workspace has stays one, whatever the call did to it: its markers
		// deleted or made again (rm -rf backup.git; mkdir …) are refused, so it keeps them, and
		// hooks/, config written beside them would be a host repository's
		if ws >= 0 && isGitDirAt(ws) && !mutated("workspace-git-dir-kept") {
			out[rel] = gitHost
		}
		if depth >= MaxDepth {
			return
		}
		for _, name := range names(up) {
			var st unix.Stat_t
			if unix.Fstatat(up, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
				continue
			}
			sub, err := openDir(up, name)
			if err != nil {
				continue
			}
			wsub := -1
			if ws >= 0 {
				if fd, err := openDir(ws, name); err == nil {
					wsub = fd
				}
			}
			walk(sub, wsub, path.Join(rel, name), depth+1)
			unix.Close(sub)
			if wsub >= 0 {
				unix.Close(wsub)
			}
		}
	}
	walk(up, ws, rel, depth)
	if mutated("workspace-commit-check") {
		return nil
	}
	return out
}

// isGitDirAt: the directory fd holds HEAD and objects and refs, or HEAD and commondir.
func isGitDirAt(fd int) bool {
	var st unix.Stat_t
	has := func(n string) bool { return unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil }
	return has("HEAD") && (has("commondir") || has("objects") && has("refs"))
}

// opaque: overlayfs marks a directory the program deleted and made again; what the workspace
// had in it is gone.
func (c *committer) opaque(rel string) bool {
	p := filepath.Join(c.upperRoot, filepath.FromSlash(rel))
	buf := make([]byte, 4)
	attr := "trusted.overlay.opaque"
	if c.userxattr {
		attr = "user.overlay.opaque"
	}
	n, err := unix.Lgetxattr(p, attr, buf)
	return err == nil && n == 1 && buf[0] == 'y'
}

func (c *committer) commitDir(up, ws int, rel, name string, st *unix.Stat_t) {
	var wst unix.Stat_t
	err := unix.Fstatat(ws, name, &wst, unix.AT_SYMLINK_NOFOLLOW)
	existed := err == nil && wst.Mode&unix.S_IFMT == unix.S_IFDIR
	if !existed && c.replayed(rel, executor.AppliedChange{Op: executor.OpMkdir}) {
		existed = true // made by the killed commit (and gone since: the walk below says so)
	}
	if err == nil && !existed { // a file or link the program replaced by a directory
		if c.removeAt(ws, name, rel) != nil {
			return
		}
	}
	if !existed {
		if why := c.madeFull(rel); why != "" {
			c.refuse(rel, "%s", why)
			return
		}
		if c.charged+dirCharge > c.r.Quota && !mutated("workspace-quota") {
			c.refuse(rel, "would pass limits.workspace_quota (%s for one call)", policy.Size(c.r.Quota))
			return
		}
		c.charged += dirCharge // the quota's charge; out.Bytes is file content (trial27: a new directory read as 4096 bytes written)
		if err := unix.Mkdirat(ws, name, dirMode(st.Mode)); err != nil && !errors.Is(err, unix.EEXIST) {
			c.refuse(rel, "could not create the directory: %v", err)
			return
		}
		c.owner(ws, name, unix.AT_SYMLINK_NOFOLLOW)
		c.did(rel, executor.AppliedChange{Op: executor.OpMkdir})
	}
	if strings.Count(rel, "/")+1 >= MaxDepth {
		c.refuse(rel, "more than %d directories deep: nothing below it is applied", MaxDepth)
		return
	}
	sub, err := openDir(up, name)
	if err != nil {
		c.refuse(rel, "unreadable in the call's layer: %v", err)
		return
	}
	defer unix.Close(sub)
	wsub, err := openDir(ws, name)
	if err != nil {
		c.refuse(rel, "the workspace's directory could not be opened: %v", err)
		return
	}
	defer unix.Close(wsub)
	if c.otherMount(wsub) {
		c.refuse(rel, "a mount point in the workspace: the call saw the directory beneath it, not what is mounted there, and nothing is applied in it")
		return
	}
	if !existed { // the walk for repositories looks at what calls made last
		c.markMade(wsub, rel)
	}
	if existed && c.opaque(rel) {
		keep := map[string]bool{}
		for _, n := range names(sub) {
			keep[n] = true
		}
		for _, n := range names(wsub) {
			if !keep[n] {
				child := path.Join(rel, n)
				if what := c.prot.match(child); what != "" {
					c.refuse(child, "deleting it: protected (%q)", what)
				} else if del := (executor.AppliedChange{Op: executor.OpDelete}); !c.replayed(child, del) && c.removeAt(wsub, n, child) == nil {
					c.did(child, del)
				}
			}
		}
	}
	c.dir(sub, wsub, rel)
}

// dirCharge is what a new directory costs against the quota: a block of the filesystem.
const dirCharge = 4096

// fileCharge is what a file of size bytes costs against the quota: its size, and at least a
// block, as on disk (attack round atk24c, F4: 6,000 one-byte files were charged 6 kB and took
// 24 MB under a 1 MiB quota).
func fileCharge(size int64) int64 {
	if mutated("workspace-quota-content-only") {
		return size
	}
	return max(size, dirCharge)
}

// dirMode and fileMode are the modes given to what a call made: no setuid, setgid or sticky
// bit, nothing writable by group or others, and always readable and writable by the owner.
func dirMode(m uint32) uint32  { return m&0o755 | 0o700 }
func fileMode(m uint32) uint32 { return m&0o755 | 0o600 }

func (c *committer) owner(ws int, name string, flags int) {
	if c.chown {
		_ = unix.Fchownat(ws, name, c.r.UID, c.r.GID, flags)
	}
}

// stagePrefix begins the name a commit stages its files and links under.
const stagePrefix = ".mcpsandbox-commit-"

func tmpName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return stagePrefix + hex.EncodeToString(b[:])
}

func (c *committer) commitFile(up, ws int, rel, name string, st *unix.Stat_t) {
	written := func() executor.AppliedChange { // named as the layer holds it (written already, or the same)
		ch := executor.AppliedChange{Op: executor.OpWrite, Bytes: st.Size}
		if c.wantHash() {
			ch.SHA256 = fileSHA(up, name, st.Size)
		}
		return ch
	}
	if c.done[rel] && c.replayed(rel, written()) {
		c.out.Bytes += st.Size
		c.charged += fileCharge(st.Size)
		return
	}
	if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 && !mutated("workspace-commit-check") {
		c.refuse(rel, "a setuid or setgid file: never applied")
		return
	}
	if c.charged+fileCharge(st.Size) > c.r.Quota && !mutated("workspace-quota") {
		c.refuse(rel, "a file of %d bytes would pass limits.workspace_quota (%s for one call; a file takes at least a block of %d bytes)", st.Size, policy.Size(c.r.Quota), dirCharge)
		c.keep(up, name, rel)
		return
	}
	var wst unix.Stat_t
	had := unix.Fstatat(ws, name, &wst, unix.AT_SYMLINK_NOFOLLOW) == nil
	if had && c.changedSince(&wst) {
		if wst.Mode&unix.S_IFMT == unix.S_IFREG && wst.Size == st.Size && sameFile(up, ws, name, st.Size) && !mutated("workspace-conflict-same-content") {
			c.out.Bytes += st.Size
			c.charged += fileCharge(st.Size)
			c.did(rel, written())
			return
		}
		c.refuse(rel, conflictWhy+"theirs is kept, and this call's version is not applied")
		c.keep(up, name, rel)
		return
	}
	src, err := unix.Openat(up, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		c.refuse(rel, "unreadable in the call's layer: %v", err)
		return
	}
	in := os.NewFile(uintptr(src), rel)
	defer in.Close()
	tmp, stage := c.tmp, c.stageAt(ws)
	dst, err := unix.Openat(stage, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		c.refuse(rel, "could not write into the workspace: %v", err)
		return
	}
	out := os.NewFile(uintptr(dst), tmp)
	var from io.Reader = io.LimitReader(in, st.Size)
	var h hash.Hash
	if c.wantHash() { // hashed as copied (past the list's bound the copy keeps its fast path)
		h = sha256.New()
		from = io.TeeReader(from, h)
	}
	n, err := io.Copy(out, from)
	if err == nil {
		err = out.Chmod(fs.FileMode(fileMode(st.Mode)))
	}
	if err == nil && c.chown {
		err = out.Chown(c.r.UID, c.r.GID)
	}
	if err == nil {
		err = unix.Futimes(int(out.Fd()), []unix.Timeval{unix.NsecToTimeval(st.Atim.Nano()), unix.NsecToTimeval(st.Mtim.Nano())})
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.replace(stage, ws, name, rel)
	}
	if err != nil {
		_ = unix.Unlinkat(stage, tmp, 0)
		c.refuse(rel, "could not write into the workspace: %v", err)
		return
	}
	if had {
		c.touch(&wst)
	}
	c.out.Bytes += n
	c.charged += fileCharge(n)
	ch := executor.AppliedChange{Op: executor.OpWrite, Bytes: n}
	if h != nil {
		ch.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	c.did(rel, ch)
}

// replace renames the staged file (c.tmp in the directory stage) over name in ws: the
// workspace's name now means the new file, and an inode the name shared with another (a hard
// link the host made) is never written. A directory in the way (the program replaced it by a
// file) is removed first.
func (c *committer) replace(stage, ws int, name, rel string) error {
	err := unix.Renameat(stage, c.tmp, ws, name)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		if err = c.removeAt(ws, name, rel); err == nil {
			err = unix.Renameat(stage, c.tmp, ws, name)
		}
	}
	return err
}

// stageAt is where a file or link to be applied in the workspace directory ws is made: beside
// its destination, so it is made as a file made there is (the directory's default ACL, its
// setgid group, a security label; staged in the root, they were the root's: attack round
// atk25a, F4). A commit killed meanwhile leaves it there under its journal's staging name,
// which finishing the commit removes from each directory it walks.
func (c *committer) stageAt(ws int) int {
	if mutated("commit-staging-in-root") {
		return c.wsRoot
	}
	return ws
}

func (c *committer) commitLink(up, ws int, rel, name string) {
	if c.done[rel] {
		n := int64(0)
		if t, err := readlinkat(up, name); err == nil {
			n = int64(len(t))
		}
		c.replayed(rel, executor.AppliedChange{Op: executor.OpLink, Bytes: n})
		return
	}
	target, err := readlinkat(up, name)
	if err != nil {
		c.refuse(rel, "unreadable in the call's layer: %v", err)
		return
	}
	t, ok := inside(rel, target, c.r.SandboxPath)
	if ok {
		ok = c.noLinkOnTheWay(t)
	}
	if !ok && !mutated("workspace-commit-check") {
		c.refuse(rel, "a symlink to %q, which is outside the workspace", target)
		return
	}
	// a link must not move a protected path (.config -> elsewhere moves .config/systemd) nor
	// lead into one (h -> .git/hooks: a host tool writing through h writes a hook)
	if !mutated("workspace-commit-check") {
		if what := c.prot.prefixOf(rel); what != "" {
			c.refuse(rel, "a symlink where the protected path %q lies below: it would move it", what)
			return
		}
		if what := c.prot.match(t); what != "" && t != "." {
			c.refuse(rel, "a symlink into the protected path %q", what)
			return
		}
		if what := c.prot.prefixOf(t); what != "" {
			c.refuse(rel, "a symlink to a directory holding the protected path %q", what)
			return
		}
	}
	if c.charged+int64(len(target)) > c.r.Quota && !mutated("workspace-quota") {
		c.refuse(rel, "would pass limits.workspace_quota (%s for one call)", policy.Size(c.r.Quota))
		return
	}
	if path.IsAbs(target) && path.Clean(c.r.SandboxPath) != path.Clean(c.lower) {
		// the workspace's path in the sandbox (/workspace in a container) means something else
		// on the host: the link is applied relative, to the same place in the workspace
		if r, err := filepath.Rel("/"+path.Dir(rel), "/"+t); err == nil {
			target = filepath.ToSlash(r)
		}
	}
	var wst unix.Stat_t
	had := unix.Fstatat(ws, name, &wst, unix.AT_SYMLINK_NOFOLLOW) == nil
	if had && c.changedSince(&wst) {
		if was, err := readlinkat(ws, name); err != nil || was != target {
			c.refuse(rel, conflictWhy+"theirs is kept, and this call's link is not applied")
			return
		}
		c.out.Bytes += int64(len(target))
		c.charged += int64(len(target))
		c.did(rel, executor.AppliedChange{Op: executor.OpLink, Bytes: int64(len(target))})
		return
	}
	c.out.Bytes += int64(len(target))
	c.charged += int64(len(target))
	tmp, stage := c.tmp, c.stageAt(ws)
	err = unix.Symlinkat(target, stage, tmp)
	if err != nil {
		c.refuse(rel, "could not write into the workspace: %v", err)
		return
	}
	c.owner(stage, tmp, unix.AT_SYMLINK_NOFOLLOW)
	if err := c.replace(stage, ws, name, rel); err != nil {
		_ = unix.Unlinkat(stage, tmp, 0)
		c.refuse(rel, "could not write into the workspace: %v", err)
		return
	}
	if had {
		c.touch(&wst)
	}
	c.did(rel, executor.AppliedChange{Op: executor.OpLink, Bytes: int64(len(target))})
}

// noLinkOnTheWay: the directories between the workspace root and the link's target (t, from
// the root) are not themselves links in the workspace, which could lead anywhere.
func (c *committer) noLinkOnTheWay(t string) bool {
	dir := path.Dir(t)
	if t == "." || dir == "." {
		return true
	}
	parts := strings.Split(dir, "/")
	// a link this call makes on the way (applied before or after this one: the order of the
	// commit must not matter)
	for i := range parts {
		var st unix.Stat_t
		p := filepath.Join(c.upperRoot, filepath.FromSlash(strings.Join(parts[:i+1], "/")))
		if unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			return false
		}
	}
	fd, err := unix.Dup(c.wsRoot)
	if err != nil {
		return false
	}
	for _, part := range parts {
		var st unix.Stat_t
		err := unix.Fstatat(fd, part, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			break // not there (yet): nothing to follow
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			return false
		}
		next, err := openDir(fd, part)
		unix.Close(fd)
		if err != nil {
			return false
		}
		fd = next
	}
	unix.Close(fd)
	return true
}

func readlinkat(dir int, name string) (string, error) {
	for n := 256; n <= 1<<16; n *= 4 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(dir, name, buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
	return "", unix.ENAMETOOLONG
}

// removeAt removes name (a file, link or whole directory) from the workspace directory dir,
// never following a link, keeping any protected entry inside (and so the directories holding
// it), each listed.
func (c *committer) removeAt(dir int, name, rel string) error {
	var st unix.Stat_t
	had := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
	if had && c.changedSince(&st) {
		c.refuse(rel, conflictWhy+"it is not deleted")
		return errors.New("kept: changed by another writer")
	}
	err := unix.Unlinkat(dir, name, 0)
	if err == nil && had {
		c.touch(&st)
	}
	if err == nil || errors.Is(err, unix.ENOENT) {
		return nil
	}
	if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
		c.refuse(rel, "could not remove it from the workspace: %v", err)
		return err
	}
	sub, err := openDir(dir, name)
	if err != nil {
		c.refuse(rel, "could not remove it from the workspace: %v", err)
		return err
	}
	if c.otherMount(sub) {
		unix.Close(sub)
		c.refuse(rel, "a mount point in the workspace: what is mounted there is not the call's to delete")
		return errors.New("kept: a mount point")
	}
	if isGitDirAt(sub) && !mutated("workspace-git-dir-kept") {
		unix.Close(sub)
		c.refuse(rel, "deleting it: a git directory by its content (HEAD, objects, refs): a repository of the host's")
		return errors.New("kept: a git directory")
	}
	kept := false
	for _, n := range names(sub) {
		child := path.Join(rel, n)
		if what := c.prot.match(child); what != "" {
			c.refuse(child, "deleting it: protected (%q)", what)
			kept = true
			continue
		}
		if c.removeAt(sub, n, child) != nil {
			kept = true
		}
	}
	unix.Close(sub)
	if kept {
		return errors.New("kept: it holds protected entries")
	}
	if err := unix.Unlinkat(dir, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		c.refuse(rel, "could not remove it from the workspace: %v", err)
		return err
	}
	return nil
}
