package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// homePrefix names a server's private HOME: the prefix, wrap's pid, "-", a random part. A wrap
// killed outright (SIGKILL) cannot remove its HOME; the next wrap removes the HOMEs of wraps
// that are gone.
const homePrefix = "mcpsandbox-wrap-home-"

// makeHome makes this start's private HOME, after sweeping the ones dead wraps left.
func makeHome() (string, error) {
	sweepHomes(os.TempDir())
	return os.MkdirTemp("", homePrefix+strconv.Itoa(os.Getpid())+"-")
}

// sweepHomes removes private HOMEs whose wrap process no longer exists (best effort; only ones
// this user owns, or any as root).
func sweepHomes(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), homePrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || !errors.Is(unix.Kill(pid, 0), unix.ESRCH) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var st unix.Stat_t
		if unix.Lstat(path, &st) == nil && (os.Geteuid() == 0 || int(st.Uid) == os.Geteuid()) {
			os.RemoveAll(path)
		}
	}
}
