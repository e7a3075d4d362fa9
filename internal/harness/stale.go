package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// runMarker is the file an arena's two directories carry (the scratch root and serve's own
// files): the run that made them, as "pid START" (START the process's start time, so that a
// pid reused by another process does not pass for the run). A later run removes marked
// directories whose run is gone (trial36 F12: verify killed outright left the canary .ssh/id_rsa
// and .aws/credentials in /var/tmp for good).
const runMarker = ".mcpsandbox-harness-run"

// stalePrefix is how an arena's directories are named (arena.go's MkdirTemp patterns).
const stalePrefix = "mcpsandbox-harness-"

// markRun writes dir's marker: this process.
func markRun(dir string) error {
	start, ok := processStart(os.Getpid())
	if !ok {
		return nil // nowhere to read a start time: nothing a later run could check
	}
	return os.WriteFile(filepath.Join(dir, runMarker), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), start)), 0o644)
}

// staleParents are the directories arenas are made in (arena.go: /var/tmp, else TMPDIR).
var staleParents = func() []string { return []string{"/var/tmp", os.TempDir()} }

var removeStaleOnce sync.Once

// removeStaleArenas removes, once per process, the arena directories a run that is gone left
// behind: only directories (not symlinks) named as arenas are, owned by this user, holding a
// marker (a file of this user) that names a process no longer running. An unmarked directory,
// one of another user or of a live run is left alone.
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
		if !ownedByMe(dir) || !ownedByMe(filepath.Join(dir, runMarker)) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, runMarker))
		if err != nil {
			continue
		}
		var pid int
		var start string
		if n, _ := fmt.Sscanf(string(b), "%d %s", &pid, &start); n != 2 || pid <= 0 {
			continue
		}
		if now, ok := processStart(pid); ok && now == start {
			continue // its run goes on
		}
		if mutated("harness-stale-arenas-kept") {
			continue
		}
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() && fi.Mode()&os.ModeSymlink == 0 {
				os.Chmod(p, 0o755) // what the sandbox made read-only, as Close does
			}
			return nil
		})
		if os.RemoveAll(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}
