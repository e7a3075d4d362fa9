package harness

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// processStart is pid's start time (clock ticks since boot, /proc/PID/stat field 22), false
// when there is no such process.
func processStart(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 { // field 3 (state) is f[0]: field 22 is f[19]
		return "", false
	}
	return f[19], true
}

// ownedByMe: path is this user's own (Lstat: a symlink is judged as itself).
func ownedByMe(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// runPlace is this process's pid namespace (its /proc/self/ns/pid link, "pid:[4026531836]")
// and the kernel's boot id: where a marker's pid means something.
func runPlace() (ns, boot string) {
	ns, _ = os.Readlink("/proc/self/ns/pid")
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return ns, strings.TrimSpace(string(b))
}

// sweepHook, when set (tests), runs between listing a directory's entry and reaching it: where a
// swap of a directory for a symlink would land.
var sweepHook func(path string)

// maxSweepDepth bounds how deep makeRemovable goes (two descriptors a level); what is deeper
// keeps its mode, and RemoveAll leaves what it then cannot remove.
const maxSweepDepth = 256

// makeRemovable gives the owner back rwx on each directory under dir that this user owns and a
// sandbox left without it (a read-only tree), so that RemoveAll can take it. It goes by
// descriptors, each directory opened beneath its parent's descriptor without following a
// symlink and changed through that descriptor: a path would follow a link another user swapped
// into the arena's world-writable outside/ while the sweep ran, and make the chmod land on any
// directory (atk36b F1: root made 0700 directories 0755). Root changes nothing: it removes
// whatever the modes say.
func makeRemovable(dir string) {
	if mutated("harness-sweep-by-path") {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() && fi.Mode()&os.ModeSymlink == 0 {
				if sweepHook != nil {
					sweepHook(p)
				}
				os.Chmod(p, 0o755)
			}
			return nil
		})
		return
	}
	if os.Geteuid() == 0 {
		return
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	sweep(fd, dir, 0)
}

// sweep makes the directory at fd (an O_PATH descriptor) and those under it removable.
func sweep(fd int, path string, depth int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != os.Geteuid() {
		return // another user's: not this user's to change, nor to read
	}
	if st.Mode&0o700 != 0o700 {
		// an O_PATH descriptor takes no fchmod; its /proc link is the directory it opened
		if unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), st.Mode&0o7777|0o700) != nil {
			return
		}
	}
	if depth >= maxSweepDepth {
		return
	}
	rfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(rfd), path)
	defer f.Close()
	for {
		ents, err := f.ReadDir(256)
		for _, e := range ents {
			if !e.IsDir() { // the kernel's type: a symlink is not a directory
				continue
			}
			if sweepHook != nil {
				sweepHook(filepath.Join(path, e.Name()))
			}
			c, err := unix.Openat(fd, e.Name(), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				continue // swapped for a link (ELOOP, ENOTDIR) or gone
			}
			sweep(c, filepath.Join(path, e.Name()), depth+1)
			unix.Close(c)
		}
		if err != nil {
			return
		}
	}
}
