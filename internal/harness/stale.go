package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runMarker is the file an arena's two directories carry (the scratch root and serve's own
// files): the run that made them, as "pid START PIDNS BOOT" (START the process's start time, so
// that a pid reused by another process does not pass for the run; PIDNS the pid namespace the
// pid is counted in and BOOT the kernel's boot id, so that a run in another pid namespace
// sharing /var/tmp, a container's or unshare's, is never judged by a pid it cannot see: atk36b
// F2). A later run removes marked directories whose run is gone (trial36 F12: verify killed
// outright left the canary .ssh/id_rsa and .aws/credentials in /var/tmp for good).
const runMarker = ".mcpsandbox-harness-run"

// stalePrefix is how an arena's directories are named (arena.go's MkdirTemp patterns).
const stalePrefix = "mcpsandbox-harness-"

// oldMarkerAge is how old a marker of another pid namespace, or one written before markers named
// it (two fields), must be before its run is judged gone: no run lasts a day.
const oldMarkerAge = 24 * time.Hour

// markRun writes dir's marker: this process.
func markRun(dir string) error {
	start, ok := processStart(os.Getpid())
	ns, boot := runPlace()
	if !ok || ns == "" || boot == "" {
		return nil // nothing a later run could check
	}
	return os.WriteFile(filepath.Join(dir, runMarker), []byte(fmt.Sprintf("%d %s %s %s\n", os.Getpid(), start, ns, boot)), 0o644)
}

// runGone says whether the run a marker names is surely gone: a run of an earlier boot, or one
// of this pid namespace and boot whose pid is gone or another process's now. A run of another
// pid namespace is not judged by its pid, which means nothing here: only by its marker's age.
func runGone(marker []byte, modified time.Time) bool {
	f := strings.Fields(string(marker))
	if len(f) < 2 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return false
	}
	pidGone := func() bool {
		now, ok := processStart(pid)
		return !ok || now != f[1]
	}
	if len(f) == 2 { // a marker of a binary before the namespace was named
		return time.Since(modified) > oldMarkerAge && pidGone()
	}
	if len(f) != 4 {
		return false
	}
	ns, boot := runPlace()
	switch {
	case boot == "" || ns == "":
		return false
	case f[3] != boot:
		return true // pid namespaces do not outlive a boot
	case f[2] != ns && !mutated("harness-stale-other-pidns"):
		return time.Since(modified) > oldMarkerAge // killed there: removed a day on
	}
	return pidGone()
}

// staleParents are the directories arenas are made in (arena.go: /var/tmp, else TMPDIR).
var staleParents = func() []string { return []string{"/var/tmp", os.TempDir()} }

var removeStaleOnce sync.Once

// removeStaleArenas removes, once per process, the arena directories a run that is gone left
// behind: only directories (not symlinks) named as arenas are, owned by this user, holding a
// marker (a file of this user) that names a process no longer running, or holding none and
// unchanged for a day. A fresh unmarked directory, one of another user or of a live run is left
// alone.
func removeStaleArenas() {
	removeStaleOnce.Do(func() {
		seen := map[string]bool{}
		for _, parent := range staleParents() {
			if seen[parent] {
				continue
			}
			seen[parent] = true
			removeStaleIn(parent)
		}
	})
}

// unmarkedAged: dir carries no marker (made by a binary before markers, or killed between its
// making and its marking) and was last changed more than a day ago: no run lasts that long.
func unmarkedAged(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, runMarker)); !os.IsNotExist(err) {
		return false
	}
	fi, err := os.Lstat(dir)
	return err == nil && time.Since(fi.ModTime()) > oldMarkerAge && !mutated("harness-stale-unmarked-kept")
}

// removeStaleIn removes the stale arena directories directly in parent; it returns their paths.
func removeStaleIn(parent string) (removed []string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), stalePrefix) || !e.IsDir() { // DirEntry: a symlink is not a dir
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if !ownedByMe(dir) {
			continue
		}
		if !unmarkedAged(dir) {
			if !ownedByMe(filepath.Join(dir, runMarker)) {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, runMarker))
			if err != nil {
				continue
			}
			fi, err := os.Lstat(filepath.Join(dir, runMarker))
			if err != nil || !runGone(b, fi.ModTime()) {
				continue // its run goes on, or cannot be judged from here
			}
		}
		if mutated("harness-stale-arenas-kept") {
			continue
		}
		makeRemovable(dir)
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}
