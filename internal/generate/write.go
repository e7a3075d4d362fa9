package generate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// WriteResult says what WriteFileSafely did.
type WriteResult struct {
	Path   string      // as asked for
	Target string      // the file actually written: Path, or where its symlinks lead
	Backup string      // "" when there was no file before
	Mode   fs.FileMode // the written file's permissions
	Owner  string      // "uid:gid" kept from the old file (or taken from the directory of a new one), "" if ours
}

// Linked reports whether Path is a symbolic link that was written through.
func (r WriteResult) Linked() bool { return r.Target != "" && r.Target != r.Path }

// resolveLinks follows path's symbolic links to the file they lead to, even when that file does
// not exist yet (a dangling link is written through, creating its target). Links in the
// directories above are left to the kernel: renaming inside a linked directory writes through it.
func resolveLinks(path string) (string, error) {
	p := path
	for range 40 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("check %s: %w", p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		l, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("read the link %s: %w", p, err)
		}
		if !filepath.IsAbs(l) {
			l = filepath.Join(filepath.Dir(p), l)
		}
		p = filepath.Clean(l)
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links: fix the link, then run init again", path)
}

// backupPlace is where the backup of target (reached from path) goes, given dir ("" = beside
// it): the state directory for a file reached through a link or in a git work tree.
func backupPlace(path, target, dir string) (string, error) {
	if dir == "" && throughLink(path, target) && !mutated("init-backup-in-workspace") {
		// a config reached through a link (itself, or a directory above it) lives in another
		// place: a dotfiles repository, maybe the workspace of the very policy init wires up,
		// where calls read a backup beside it (atk40 F6): the backup goes to the state
		// directory, beside neither the link nor its target
		d, err := ProjectBackupDir()
		if err != nil {
			return "", fmt.Errorf("%s leads through a link to %s, whose backup init keeps in its state directory: %w", path, target, err)
		}
		return d, nil
	}
	if _, inWorkTree := workTreeTop(filepath.Dir(target)); dir == "" && inWorkTree && !mutated("init-backup-in-work-tree") {
		// beside a file in a git work tree (a dotfiles repository a config links into), a
		// backup is an untracked file that a `git add -A` publishes, env values and all: it
		// goes where a project's go (trial32 F17)
		if d, err := ProjectBackupDir(); err == nil {
			return d, nil
		}
	}
	return dir, nil
}

// throughLink reports whether path, resolved to target, is reached through a symbolic link: its
// own, or one of a directory above it (~/.gemini -> dotfiles/gemini).
func throughLink(path, target string) bool {
	if target != path {
		return true
	}
	dir := filepath.Dir(path)
	real, err := filepath.EvalSymlinks(dir)
	return err == nil && real != filepath.Clean(dir)
}

// WriteFileSafely replaces path with data without ever leaving it half-written. A symbolic link
// is written through and stays a link: its target is replaced, in the target's own directory.
// The old file is backed up beside it (NAME.bak-TIMESTAMP; a file reached through a link: in the
// state directory, see WriteFileBackedUp) with the same permissions,
// owner and group; the new contents go to a temporary file there, given the old file's
// permissions, owner and group (mode, and the directory's owner when run as root, for a new
// file), synced and renamed over the target. A file that is read-only to us is refused rather
// than replaced: the rename would succeed, but the owner's intent was that nobody writes it.
func WriteFileSafely(path string, data []byte, mode fs.FileMode) (WriteResult, error) {
	return WriteFileBackedUp(path, data, mode, "")
}

// KeepBackups is how many backups of one file init keeps: the newest, and the oldest besides
// (the file as it was before init first changed it, which may hold what the user wrote by
// hand); the ones between are removed once a write succeeded.
const KeepBackups = 3

// WriteFileBackedUp is WriteFileSafely with the backup in backupDir ("" = beside the target, or
// in the state directory for a file reached through a link),
// named after the target's whole path: a file inside a project the user commits (.vscode/mcp.json)
// gets no backup beside it for git to pick up. Of one file's backups the newest KeepBackups stay.
func WriteFileBackedUp(path string, data []byte, mode fs.FileMode, backupDir string) (WriteResult, error) {
	return writeFileBackedUp(path, data, mode, backupDir, true, readAs{})
}

// readAs is what a write expects to replace: the file as a plan read it. checked false: no
// expectation (the file as it is when the write begins).
type readAs struct {
	checked, existed bool
	old              []byte
}

// testWindow, set by tests only, runs at two points of a checked write: "before-check" (the
// temporary file written, the file not looked at again yet) and "before-swap" (the last check
// passed, the rename next), where a test makes another program's write land.
var testWindow func(stage, target string)

// errChanged: the file is not as the plan read it.
func errChanged(path string) error {
	return fmt.Errorf("%s changed while init was running (another program wrote it): nothing of it was lost; run init again", path)
}

// writeFileBackedUp is WriteFileBackedUp; with prune false the old backups stay until
// PruneBackups is called for the result (a write that may yet be taken back).
//
// With want checked, the file must still be as read, up to the rename: the check is made last,
// after the backup and the temporary file are written, and again after the rename on what the
// rename replaced (a client that rewrites its config while it runs, Claude Code's
// ~/.claude.json, wrote in between: atk40 F2); see replace.
func writeFileBackedUp(path string, data []byte, mode fs.FileMode, backupDir string, prune bool, want readAs) (WriteResult, error) {
	res := WriteResult{Path: path, Mode: mode}
	target, err := resolveLinks(path)
	if err != nil {
		return res, err
	}
	res.Target = target
	via := ""
	if target != path {
		via = " (the link " + path + " leads there)"
	}
	var own owner
	var guard *seen // what the rename may replace (nil: whatever is there)
	old, err := os.Stat(target)
	switch {
	case err == nil:
		if !old.Mode().IsRegular() {
			return res, fmt.Errorf("%s is not a regular file%s: move it aside, then run init again", target, via)
		}
		// A new file renamed over this name would leave its other names with the old contents.
		if n := links(old); n > 1 && !mutated("init-hard-links-split") {
			return res, fmt.Errorf("%s has %d names (hard links)%s: init replaces a file atomically (a new file renamed over it), which would leave the other names with the old contents. "+
				"Make it one file (or a symbolic link, which init writes through), or use --print and add the entry by hand", target, n, via)
		}
		// No owner write bit means "do not write" even to root, whom access(2) would let through.
		if err := writable(target); old.Mode().Perm()&0o200 == 0 || err != nil {
			return res, readOnly(target, via, old.Mode().Perm(), err)
		}
		res.Mode = old.Mode().Perm()
		own = ownerOfFile(target, old)
		prev, err := ReadConfigFile(target)
		if err != nil {
			return res, fmt.Errorf("read %s for its backup: %w", target, err)
		}
		if want.checked && (!want.existed || !bytes.Equal(prev, want.old)) {
			return res, errChanged(path)
		}
		if want.checked {
			guard = &seen{fi: old, data: prev}
		}
		if backupDir, err = backupPlace(path, target, backupDir); err != nil {
			return res, err
		}
		if res.Backup, err = writeBackup(backupBase(target, backupDir), prev, res.Mode, own); err != nil {
			return res, fmt.Errorf("back up %s: %w (nothing was changed)", target, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		if want.checked && want.existed {
			return res, errChanged(path)
		}
		if want.checked {
			guard = &seen{}
		}
		dir := filepath.Dir(target)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return res, fmt.Errorf("create %s: %w", dir, err)
		}
		if st, err := os.Stat(dir); err == nil {
			own = newFileOwner(st)
		}
	default:
		return res, fmt.Errorf("check %s: %w", target, err)
	}
	res.Owner, err = replaceChecked(target, data, res.Mode, own, guard)
	if err != nil {
		if res.Backup != "" {
			os.Remove(res.Backup)
		}
		var ce *changedError
		if errors.As(err, &ce) {
			if ce.theirs != "" {
				return res, fmt.Errorf("%s was written by another program while init replaced it, and putting its version back failed (%v): "+
					"its version is at %s, init's in %s; compare them, keep the one you want (mv %s %s), then run init again", target, ce.err, ce.theirs, target, ce.theirs, target)
			}
			if ce.after {
				return res, fmt.Errorf("%s was written by another program while init replaced it: its version is back in place and init's change was not made; run init again", target)
			}
			return res, errChanged(path)
		}
		if res.Backup == "" && !mutated("init-readonly-fix-unsaid") {
			// No file was there: the directory took no new one (a read-only directory or mount).
			return res, &ReadOnlyError{Path: target, Why: fmt.Sprintf("could not be created in %s (%v)", filepath.Dir(target), err),
				Fix: "make that directory writable for you (its owner and mode: ls -ld " + filepath.Dir(target) + "), or remount it writable; nothing was written"}
		}
		return res, fmt.Errorf("write %s: %w (the old file is unchanged)", target, err)
	}
	if prune {
		PruneBackups(res)
	}
	return res, nil
}

// ReadOnlyError is a file init may not write, with the fix for its cause (trial49 F5: every
// cause was told "chmod u+w", which a read-only mount or an immutable file does not take). Alt,
// set by the caller, is the way around it (a client's config: --print; the policy: elsewhere).
type ReadOnlyError struct {
	Path, Why, Fix, Alt string
}

func (e *ReadOnlyError) Error() string {
	alt := e.Alt
	if alt == "" {
		alt = "use --print and add the entry by hand"
	}
	return fmt.Sprintf("%s %s: %s, or %s", e.Path, e.Why, e.Fix, alt)
}

// readOnly is the ReadOnlyError for target (via: the link leading there), whose mode is perm,
// given access(2)'s err (nil: only the owner write bit is missing).
func readOnly(target, via string, perm fs.FileMode, err error) error {
	e := &ReadOnlyError{Path: target, Why: "is read-only" + via, Fix: "make it writable (chmod u+w " + target + ")"}
	if mutated("init-readonly-fix-unsaid") {
		return e
	}
	switch {
	case errors.Is(err, syscall.EROFS):
		e.Why, e.Fix = "is on a read-only file system"+via, "remount it writable (its mode is not the cause)"
	case errors.Is(err, syscall.EPERM):
		e.Why, e.Fix = "may not be changed by anyone"+via+" (immutable or append-only: lsattr "+target+" shows an i or a)", "take the flag off (chattr -i -a "+target+", as root)"
	case errors.Is(err, syscall.EACCES) && perm&0o200 != 0:
		e.Why, e.Fix = "may not be written by you"+via+" (its mode "+perm.String()+": another user owns it, or an ACL refuses)", "run init as its owner, or have them make it writable for you"
	}
	return e
}

// PruneBackups removes the backups of r's file past KeepBackups (see pruneBackups).
func PruneBackups(r WriteResult) {
	if r.Backup == "" || mutated("init-backups-pile") {
		return
	}
	if m := backupName().FindStringIndex(r.Backup); m != nil {
		pruneBackups(r.Backup[:m[0]], KeepBackups)
	}
}

// backupBase is the path a target's backups are named after: the target itself, or in dir a
// name made of its whole path (/p/.vscode/mcp.json -> dir/p%.vscode%mcp.json), one name for
// one path: a "%", "@" or ":" in it is written @XX (its code in hex), so /p/a%b/mcp.json and
// /p/a/b/mcp.json do not share a base, and pruning one's backups cannot remove the other's
// (the file from before init first changed it among them: atk33 F6's note).
func backupBase(target, dir string) string {
	if dir == "" {
		return target
	}
	path := strings.TrimPrefix(filepath.ToSlash(target), "/")
	if mutated("init-backup-name-injective") {
		return filepath.Join(dir, strings.ReplaceAll(strings.ReplaceAll(path, "/", "%"), ":", ""))
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '/':
			b.WriteByte('%')
		case '%', '@', ':':
			fmt.Fprintf(&b, "@%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return filepath.Join(dir, b.String())
}

// backupName matches BASE.bak-YYYYMMDD-HHMMSS and its -N twins.
var backupName = lazy.Regexp(`\.bak-(\d{8}-\d{6})(?:-(\d+))?$`)

// pruneBackups removes all but the newest keep backups of base and its oldest (best effort: a
// backup that cannot be removed stays). The oldest stays because rounds of init that are taken
// back (a proof that fails puts the file back, itself a backed-up write) must not push out the
// only copy of the file from before init.
func pruneBackups(base string, keep int) {
	ents, err := os.ReadDir(filepath.Dir(base))
	if err != nil {
		return
	}
	type bak struct {
		name, ts string
		n        int
	}
	var bs []bak
	for _, e := range ents {
		m := backupName().FindStringSubmatch(e.Name())
		if m == nil || e.Name() != filepath.Base(base)+m[0] || !e.Type().IsRegular() {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		bs = append(bs, bak{e.Name(), m[1], n})
	}
	slices.SortFunc(bs, func(a, b bak) int {
		if c := strings.Compare(b.ts, a.ts); c != 0 {
			return c
		}
		return b.n - a.n
	})
	if len(bs) <= keep+1 {
		return
	}
	last := len(bs) - 1
	if mutated("init-backups-oldest") {
		last = len(bs)
	}
	for _, b := range bs[keep:last] {
		os.Remove(filepath.Join(filepath.Dir(base), b.name))
	}
}

// AtomicWrite replaces path with data so that a reader sees the old file or the new one, never
// half of one, and a crash leaves one of the two: a temporary file beside it, synced, renamed
// over it, and the directory synced. For reports and other files that need no backup.
func AtomicWrite(path string, data []byte, mode fs.FileMode) error {
	if _, err := replaceChecked(path, data, mode, owner{}, nil); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// seen is the file a checked write expects to replace: its identity and size and time (fi; nil:
// no file) and its contents.
type seen struct {
	fi   fs.FileInfo
	data []byte
}

// still reports whether the file at p is the one seen, with the same contents.
func (s *seen) still(p string) bool {
	fi, err := os.Lstat(p)
	if s.fi == nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if err != nil || !os.SameFile(fi, s.fi) || fi.Size() != s.fi.Size() || !fi.ModTime().Equal(s.fi.ModTime()) {
		return false
	}
	b, err := ReadConfigFile(p)
	return err == nil && bytes.Equal(b, s.data)
}

// changedError: the file a checked write was to replace changed. after: seen after the rename,
// another program's version put back; theirs: where its version is when putting it back failed
// (err).
type changedError struct {
	after  bool
	theirs string
	err    error
}

func (e *changedError) Error() string { return "the file changed while it was written" }

// replace is the atomic step both writers share.
func replace(target string, data []byte, mode fs.FileMode, own owner) (string, error) {
	return replaceChecked(target, data, mode, own, nil)
}

// replaceChecked is replace that, given was, replaces only the file seen: it looks last, once
// the temporary file is written, then exchanges the two names in one step (swap) and looks at
// what it replaced. Another program's write that landed between the look and the exchange (in
// place, or a file renamed over the name) is then under the temporary name: it is exchanged
// back, and the error says so. A write after that look is not seen: the kernel gives no lock
// the clients take (none of Claude Code, Cursor, VS Code, Gemini CLI or Codex locks its config),
// so the window is made as small as a look at one file. Where the file system cannot exchange
// names (Windows, some network file systems) the look before the rename is the last.
func replaceChecked(target string, data []byte, mode fs.FileMode, own owner, was *seen) (kept string, err error) {
	tmp, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return "", err
	}
	defer func() {
		// not when it holds another program's version that could not be put back
		var ce *changedError
		if !errors.As(err, &ce) || ce.theirs != tmp.Name() {
			os.Remove(tmp.Name())
		}
	}()
	// the file's final owner, mode and ACL while it is still empty: written first, the data
	// could be read through the mode before the ACL narrowed it (atk35b F1)
	err = tmp.Chmod(mode)
	if err == nil {
		kept, err = own.apply(tmp)
	}
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && was != nil {
		err = swapChecked(tmp.Name(), target, was)
	} else if err == nil {
		err = os.Rename(tmp.Name(), target)
	}
	if err != nil {
		return "", err
	}
	syncDir(filepath.Dir(target))
	return kept, nil
}

// swapChecked puts tmp at target if target is still the file was saw (see replaceChecked).
func swapChecked(tmp, target string, was *seen) error {
	if testWindow != nil {
		testWindow("before-check", target)
	}
	lost := mutated("init-write-lost-update")
	if !lost && !was.still(target) {
		return &changedError{}
	}
	if testWindow != nil {
		testWindow("before-swap", target)
	}
	if lost {
		return os.Rename(tmp, target)
	}
	if was.fi == nil {
		ok, err := renameNew(tmp, target)
		if errors.Is(err, fs.ErrExist) {
			return &changedError{after: true}
		}
		if ok || err != nil {
			return err
		}
		return os.Rename(tmp, target)
	}
	ok, err := swap(tmp, target)
	if err != nil {
		return err
	}
	if !ok {
		return os.Rename(tmp, target)
	}
	if was.still(tmp) {
		return nil // tmp holds the file seen, removed by the caller as a rename would
	}
	// another program's version is under tmp: back it goes (ours then under tmp, removed)
	if _, err := swap(tmp, target); err != nil {
		theirs := target + ".theirs-" + time.Now().Format("20060102-150405")
		if rerr := os.Rename(tmp, theirs); rerr != nil {
			theirs = tmp
		}
		return &changedError{after: true, theirs: theirs, err: err}
	}
	return &changedError{after: true}
}

// writeBackup writes data to a new NAME.bak-TIMESTAMP beside path (never over an older backup:
// two runs in one second get -2, -3, …) with the old file's mode, owner and group.
func writeBackup(path string, data []byte, mode fs.FileMode, own owner) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	base := path + ".bak-" + time.Now().Format("20060102-150405")
	// After the newest of this second, so that the names keep their order once older ones
	// are pruned.
	first := 1
	if ents, err := os.ReadDir(filepath.Dir(path)); err == nil {
		for _, e := range ents {
			if n, ok := strings.CutPrefix(e.Name(), filepath.Base(base)); ok {
				k := 1
				if n != "" {
					k, _ = strconv.Atoi(strings.TrimPrefix(n, "-"))
				}
				first = max(first, k+1)
			}
		}
	}
	for i := first; i < first+100; i++ {
		name := base
		if i > 1 {
			name += "-" + strconv.Itoa(i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		err = f.Chmod(mode) // owner, mode and ACL before the data, as replace does
		if err == nil {
			_, err = own.apply(f)
		}
		if err == nil {
			_, err = f.Write(data)
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
	return "", fmt.Errorf("too many backups of %s today: remove some", path)
}

// Undo puts back what WriteFileSafely replaced: the backup is renamed over the target (its
// contents, mode, owner and group are the old file's), and a file that did not exist is removed.
func Undo(r WriteResult) error {
	target := r.Target
	if target == "" {
		target = r.Path
	}
	if r.Backup == "" {
		if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", target, err)
		}
		return nil
	}
	if err := os.Rename(r.Backup, target); err != nil {
		// A backup kept on another file system (the state directory): copy it back.
		if cerr := copyBack(r.Backup, target); cerr != nil {
			return fmt.Errorf("restore %s from %s: %w (copy it back by hand)", target, r.Backup, cerr)
		}
		os.Remove(r.Backup)
	}
	syncDir(filepath.Dir(target))
	return nil
}

// copyBack replaces target with the backup's contents, mode, owner and group.
func copyBack(backup, target string) error {
	st, err := os.Stat(backup)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(backup)
	if err != nil {
		return err
	}
	_, err = replace(target, b, st.Mode().Perm(), ownerOfFile(backup, st))
	return err
}
