package helper

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// ProbeReport is what a probe run prints: what the helper saw when, after applying every layer,
// it tried what each layer forbids. A layer counts as in force only when its attempt failed the
// way that layer makes it fail; nothing here is a constant.
type ProbeReport struct {
	LandlockABI int    `json:"landlock_abi"`
	Landlock    string `json:"landlock"`
	// LandlockFS: reading a directory outside every allowed path failed with EACCES.
	LandlockFS bool `json:"landlock_fs"`
	// LandlockWrite: creating a file in a world-writable directory outside every allowed path
	// failed with EACCES ("" tried = no such directory here; then it counts as not tried).
	LandlockWrite bool   `json:"landlock_write"`
	WriteTried    string `json:"write_tried,omitempty"`
	// Seccomp: /proc/thread-self/status says "Seccomp: 2" and unshare(0), which the filter
	// denies, failed with EPERM.
	Seccomp bool `json:"seccomp"`
	// SocketDenied: socket(AF_INET) failed with EACCES (tried only when the policy has no network).
	SocketDenied bool `json:"socket_denied"`
	// NoNewPrivs: /proc/thread-self/status says "NoNewPrivs: 1".
	NoNewPrivs bool `json:"no_new_privs"`
	UID        int  `json:"uid"`
	PID        int  `json:"pid"`
	// Namespaces are the helper's /proc/thread-self/ns links (e.g. "net:[4026532..]"); serve
	// compares them with its own.
	Namespaces map[string]string `json:"namespaces"`
	// Interfaces are the network interfaces the helper sees (/proc/thread-self/net/dev).
	Interfaces []string `json:"interfaces"`
	// PrivateTmp: /tmp is a tmpfs other than the one the helper started with.
	PrivateTmp bool `json:"private_tmp"`
	// ReadOnly counts the protected paths mounted read-only, of ROBinds.
	ReadOnly int `json:"read_only"`
	ROBinds  int `json:"ro_binds"`
	// Rlimits are the limits read back after setting them (RLIMIT_AS is not set in a probe: the
	// probe still has to allocate to report).
	Rlimits map[string]uint64 `json:"rlimits"`
	// Saw is what each attempt returned, in words, for --check's details.
	Saw []string `json:"saw"`
}

// ProbeNamespaces are the namespaces the probe reports.
var ProbeNamespaces = []string{"pid", "net", "mnt", "ipc", "uts", "user"}

// RlimitNames names the limits the probe reads back.
var RlimitNames = map[int]string{unix.RLIMIT_CPU: "cpu", unix.RLIMIT_FSIZE: "fsize", unix.RLIMIT_NOFILE: "nofile",
	unix.RLIMIT_NPROC: "nproc", unix.RLIMIT_CORE: "core", unix.RLIMIT_MEMLOCK: "memlock", unix.RLIMIT_AS: "as"}

// prober collects the report across the helper's steps.
type prober struct {
	rep      ProbeReport
	status   int // /proc/thread-self/status, opened before Landlock, read after seccomp
	tmpDev   uint64
	tmpKnown bool
}

// probeStart runs first: it notes what /tmp is before the private mounts and opens the status
// file the last step reads (Landlock would refuse to open it later).
func probeStart() *prober {
	p := &prober{status: -1, rep: ProbeReport{Namespaces: map[string]string{}, Rlimits: map[string]uint64{}}}
	var st unix.Stat_t
	if unix.Stat("/tmp", &st) == nil {
		p.tmpDev, p.tmpKnown = st.Dev, true
	}
	if fd, err := unix.Open("/proc/thread-self/status", unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
		p.status = fd
	}
	return p
}

func (p *prober) saw(format string, a ...any) {
	p.rep.Saw = append(p.rep.Saw, fmt.Sprintf(format, a...))
}

// beforeRestrict runs after the mounts and before Landlock: namespaces, interfaces, mounts.
func (p *prober) beforeRestrict(s *Spec) {
	for _, n := range ProbeNamespaces {
		if l, err := os.Readlink("/proc/thread-self/ns/" + n); err == nil {
			p.rep.Namespaces[n] = l
		}
	}
	if b, err := os.ReadFile("/proc/thread-self/net/dev"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, _, ok := strings.Cut(line, ":"); ok && !strings.Contains(name, "|") {
				p.rep.Interfaces = append(p.rep.Interfaces, strings.TrimSpace(name))
			}
		}
		p.saw("interfaces: %s", strings.Join(p.rep.Interfaces, ", "))
	} else {
		p.saw("interfaces: cannot read /proc/thread-self/net/dev: %v", err)
	}
	if s.Mounts {
		var st unix.Stat_t
		var fs unix.Statfs_t
		if unix.Stat("/tmp", &st) == nil && unix.Statfs("/tmp", &fs) == nil {
			p.rep.PrivateTmp = fs.Type == unix.TMPFS_MAGIC && p.tmpKnown && st.Dev != p.tmpDev
			p.saw("/tmp: tmpfs %v, same device as before the mounts %v", fs.Type == unix.TMPFS_MAGIC, st.Dev == p.tmpDev)
		}
		p.rep.ROBinds = len(s.ROBinds)
		for _, r := range s.ROBinds {
			var fs unix.Statfs_t
			if unix.Statfs(r, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0 {
				p.rep.ReadOnly++
			} else {
				p.saw("%s: not mounted read-only", r)
			}
		}
	}
}

// afterRestrict runs with every layer applied: it tries what each one forbids.
func (p *prober) afterRestrict(s *Spec) {
	r := &p.rep
	// Seccomp and no_new_privs, as the kernel reports them for this thread.
	if p.status >= 0 {
		buf := make([]byte, 4096)
		n, err := unix.Pread(p.status, buf, 0)
		if err == nil {
			sc := bufio.NewScanner(bytes.NewReader(buf[:n]))
			for sc.Scan() {
				k, v, _ := strings.Cut(sc.Text(), ":")
				v = strings.TrimSpace(v)
				switch k {
				case "Seccomp":
					r.Seccomp = v == "2"
					p.saw("/proc/thread-self/status: Seccomp: %s", v)
				case "NoNewPrivs":
					r.NoNewPrivs = v == "1"
					p.saw("/proc/thread-self/status: NoNewPrivs: %s", v)
				}
			}
		} else {
			p.saw("read /proc/thread-self/status: %v", err)
		}
		unix.Close(p.status)
	} else {
		p.saw("/proc/thread-self/status could not be opened")
	}
	// A syscall the filter denies: unshare(0) changes nothing when allowed.
	_, _, e := unix.RawSyscall(unix.SYS_UNSHARE, 0, 0, 0)
	r.Seccomp = r.Seccomp && e == unix.EPERM
	p.saw("unshare(0): %s", errnoWord(e))
	if s.NoNetwork {
		// A host list lets TCP sockets through to the proxy's port: what must fail then is UDP.
		typ, what := unix.SOCK_STREAM, "socket(AF_INET)"
		if s.EgressPort != 0 {
			typ, what = unix.SOCK_DGRAM, "socket(AF_INET, SOCK_DGRAM)"
		}
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, unix.AF_INET, uintptr(typ|unix.SOCK_CLOEXEC), 0)
		if e == 0 {
			unix.Close(int(fd))
		}
		r.SocketDenied = e == unix.EACCES
		p.saw("%s: %s", what, errnoWord(e))
	}
	// Landlock: a directory no rule allows, which every uid may read by its permissions.
	if dir := outsideDir(s); dir != "" {
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		r.LandlockFS = errors.Is(err, unix.EACCES)
		p.saw("open %s: %s", dir, errWord(err))
	} else {
		p.saw("landlock: every probe directory is allowed by the policy; nothing to try")
	}
	if dir := writableOutside(s); dir != "" {
		var rnd [8]byte
		unix.Getrandom(rnd[:], 0)
		name := fmt.Sprintf("%s/.mcpsandbox-probe-%x", dir, rnd)
		fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
			unix.Unlink(name)
		}
		r.LandlockWrite, r.WriteTried = errors.Is(err, unix.EACCES), dir
		p.saw("open %s for writing: %s", name, errWord(err))
	}
	ruid, euid, suid := unix.Getresuid()
	r.UID = ruid
	if ruid != euid || ruid != suid {
		r.UID = 0 // a saved or effective uid left behind counts as not dropped
		p.saw("uids differ: real %d, effective %d, saved %d", ruid, euid, suid)
	}
	r.PID = unix.Getpid()
}

// probeRlimits sets the call's limits (all but RLIMIT_AS) and reads them back.
func (p *prober) probeRlimits(s *Spec) error {
	for _, l := range s.Rlimits {
		if l.Resource == unix.RLIMIT_AS {
			continue
		}
		lim := unix.Rlimit{Cur: l.Value, Max: l.Value}
		if err := unix.Setrlimit(l.Resource, &lim); err != nil {
			return fmt.Errorf("setrlimit %d=%d: %w", l.Resource, l.Value, err)
		}
	}
	for res, name := range RlimitNames {
		var lim unix.Rlimit
		if unix.Getrlimit(res, &lim) == nil && lim.Cur != unix.RLIM_INFINITY {
			p.rep.Rlimits[name] = lim.Cur
		}
	}
	return nil
}

// writableOutside is a world-writable sticky directory (any uid may create files there) outside
// every path the spec lets the command write.
func writableOutside(s *Spec) string {
next:
	for _, d := range []string{"/var/tmp", "/dev/shm", "/tmp"} {
		var st unix.Stat_t
		if unix.Stat(d, &st) != nil || st.Mode&0o1002 != 0o1002 {
			continue
		}
		for _, a := range s.RWDirs {
			if a == "/" || Within(a, d) {
				continue next
			}
		}
		return d
	}
	return ""
}

// outsideDir is a directory readable by anyone that no Landlock rule of the spec allows.
func outsideDir(s *Spec) string {
	allowed := append(append(append([]string{}, s.ReadDirs...), s.RWDirs...), s.ExecFiles...)
	allowed = append(append(allowed, s.ReadFiles...), s.DevFiles...)
next:
	for _, d := range []string{"/", "/etc", "/proc", "/sys", "/var"} {
		for _, a := range allowed {
			if a == "/" || Within(a, d) {
				continue next
			}
		}
		return d
	}
	return ""
}

func errnoWord(e unix.Errno) string {
	if e == 0 {
		return "succeeded"
	}
	return "failed, " + unix.ErrnoName(e)
}

func errWord(err error) string {
	var e unix.Errno
	if err == nil {
		return "succeeded"
	}
	if errors.As(err, &e) {
		return errnoWord(e)
	}
	return err.Error()
}
