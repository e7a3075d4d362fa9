package sandbox

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Private npm caches are kept per key (CacheKey), and a changed policy gets a new key: the old
// key's cache (40-75 MB for a typical server) was kept for good. A start prunes the caches no
// policy has used for pruneAge, and at once the one the same policy file used before it
// changed; only ones wrap made (a KEY directory of wrap's own naming, with the seed.json and
// use.lock it writes, owned by wrap's user), and only while no start uses them (their use.lock,
// taken exclusively, which every start holds shared or exclusive for its whole run).

// pruneAge: a cache no start used for this long is pruned.
var pruneAge = 30 * 24 * time.Hour

// keyDir matches the names CacheKey gives.
var keyDir = regexp.MustCompile(`^.+-([0-9a-f]{12}|unhashable)$`)

// policyRecord is KEY/policy: the policy file whose start last held the cache alone.
const policyRecord = "policy"

// noteUse records that a start uses dir's cache: use.lock's time (the age rule) and, when the
// start holds it alone, the policy file it was started with (the changed-file rule).
func noteUse(dir, file string, alone bool) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(dir, "use.lock"), now, now)
	if !alone || file == "" {
		return
	}
	if abs, err := filepath.Abs(file); err == nil {
		if b, err := os.ReadFile(filepath.Join(dir, policyRecord)); err != nil || string(b) != abs {
			tmp := filepath.Join(dir, policyRecord+".tmp")
			if os.WriteFile(tmp, []byte(abs), 0o600) == nil {
				_ = os.Rename(tmp, filepath.Join(dir, policyRecord))
			}
		}
	}
}

// pruneNPMCaches removes, under root, the caches of keys other than mine that no start uses and
// that none used for pruneAge or that file (this start's policy file) used under another key,
// save, from the second rule, those that seed this one (sources: a wider policy's, which file
// held before, goes only by age). Best effort: a cache it cannot judge or lock is kept. Says
// whether one went.
func pruneNPMCaches(root, mine, file string, sources map[string]int64) (pruned bool) {
	if mutated("wrap-npm-cache-never-pruned") {
		return false
	}
	if file != "" {
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".pruned-") { // a prune that ended before it removed it
			if info, err := e.Info(); err == nil && info.IsDir() && time.Since(info.ModTime()) > time.Hour &&
				int(info.Sys().(*syscall.Stat_t).Uid) == os.Geteuid() {
				_ = os.RemoveAll(filepath.Join(root, e.Name()))
			}
			continue
		}
		if e.Name() == mine || !e.IsDir() || !keyDir.MatchString(e.Name()) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if !wrapMade(dir) {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(dir, policyRecord))
		_, source := sources[filepath.Join(dir, "npm")]
		replaced := file != "" && string(b) == file && !source
		if !replaced && !stale(dir) {
			continue
		}
		pruned = pruneCache(root, dir, replaced) || pruned
	}
	return pruned
}

// wrapMade: dir is a KEY directory wrap made (its own user's, with seed.json and use.lock).
func wrapMade(dir string) bool {
	st, err := os.Lstat(dir)
	if err != nil || !st.IsDir() || int(st.Sys().(*syscall.Stat_t).Uid) != os.Geteuid() {
		return false
	}
	for _, f := range []string{"seed.json", "use.lock"} {
		if st, err := os.Lstat(filepath.Join(dir, f)); err != nil || !st.Mode().IsRegular() {
			return false
		}
	}
	_, err = readSeed(dir)
	return err == nil
}

// stale: no start used dir's cache for pruneAge: use.lock's time (noteUse), and, for a cache
// of a wrap that did not set it yet, what npm changes as it runs (its log directory, its npx
// trees) and the last seed.
func stale(dir string) bool {
	last := time.Time{}
	for _, p := range []string{"use.lock", "seed.json", "npm", filepath.Join("npm", "_logs"), filepath.Join("npm", "_npx")} {
		if st, err := os.Lstat(filepath.Join(dir, p)); err == nil && st.ModTime().After(last) {
			last = st.ModTime()
		}
	}
	return !last.IsZero() && time.Since(last) > pruneAge
}

// pruneCache removes dir once it holds its use.lock alone; dir is first moved aside, so a start
// that opened the lock meanwhile finds it moved (lockUse) and makes the cache again.
func pruneCache(root, dir string, replaced bool) bool {
	lock, err := os.OpenFile(filepath.Join(dir, "use.lock"), os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false
	}
	defer lock.Close()
	if unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // a start uses it
	}
	if !replaced && !stale(dir) { // a start used it since it was judged
		return false
	}
	aside, err := os.MkdirTemp(root, ".pruned-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(aside)
	return os.Rename(dir, filepath.Join(aside, filepath.Base(dir))) == nil
}

// lockedHere says the lock f, once taken, is still the use.lock at path: not moved away by a
// prune (pruneCache) while this start waited for it.
func lockedHere(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}
