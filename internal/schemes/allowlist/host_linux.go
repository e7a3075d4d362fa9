package allowlist

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"golang.org/x/sys/unix"
)

// hostChecks are the kernel facts the allowlist scheme's layers rest on.
func hostChecks(context.Context) []verify.Check {
	return []verify.Check{kernel(), root(), landlockABI(), userns(),
		namespace("pid namespace", unix.CLONE_NEWPID), namespace("network namespace", unix.CLONE_NEWNET),
		seccompAvail(), cgroupVersion()}
}

func kernel() verify.Check {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return verify.Check{Name: "kernel", Value: err.Error()}
	}
	return verify.Check{Name: "kernel", OK: true, Value: unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])}
}

func root() verify.Check {
	if os.Geteuid() == 0 {
		return verify.Check{Name: "user", OK: true, Value: "root: commands run as an unprivileged uid, with PID and network namespaces"}
	}
	return verify.Check{Name: "user", OK: true, Value: fmt.Sprintf("uid %d, not root: commands run as you; namespaces need unprivileged user namespaces", os.Geteuid())}
}

func landlockABI() verify.Check {
	// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) returns the ABI version.
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1)
	if errno != 0 {
		return verify.Check{Name: "landlock", Value: "unavailable: " + errno.Error(),
			Advice: "boot a kernel >= 5.13 with lsm=landlock,...: without it the allowlist scheme cannot confine file access in the kernel"}
	}
	c := verify.Check{Name: "landlock", OK: true, Value: fmt.Sprintf("ABI %d", abi)}
	if abi < 4 {
		c.Advice = "ABI 4 (kernel 6.7) adds TCP restrictions; ABI 6 (6.12) scopes signals and abstract unix sockets"
	}
	return c
}

func userns() verify.Check {
	c := verify.Check{Name: "user namespaces", OK: true, Value: "usable"}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		c.OK, c.Value = false, "disabled (user.max_user_namespaces = 0)"
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" && os.Geteuid() != 0 {
		c.OK, c.Value = false, "disabled for unprivileged users (kernel.unprivileged_userns_clone = 0)"
	}
	if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil && strings.TrimSpace(string(b)) == "1" && os.Geteuid() != 0 {
		c.OK, c.Value = false, "restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns = 1)"
	}
	if !c.OK {
		c.Advice = "without root or user namespaces the allowlist scheme has no PID or network namespace; run serve as root or enable them"
	}
	return c
}

// namespace starts /bin/true in a new namespace of the kind (inside a user namespace when not
// root, as serve does): the only sure way to know the kernel and its policy allow it.
func namespace(name string, flag uintptr) verify.Check {
	cmd := exec.Command("/bin/true")
	attr := &syscall.SysProcAttr{Cloneflags: flag}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Run(); err != nil {
		return verify.Check{Name: name, Value: "not usable: " + err.Error(),
			Advice: "the allowlist scheme then runs commands without it; run serve as root or enable user namespaces"}
	}
	return verify.Check{Name: name, OK: true, Value: "usable"}
}

func seccompAvail() verify.Check {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil && strings.Contains(string(b), "Seccomp:") {
		return verify.Check{Name: "seccomp", OK: true, Value: "available"}
	}
	return verify.Check{Name: "seccomp", Value: "not reported by the kernel", Advice: "enable CONFIG_SECCOMP_FILTER"}
}

func cgroupVersion() verify.Check {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return verify.Check{Name: "cgroups", OK: true, Value: "v2 (unified)"}
	}
	if _, err := os.Stat("/sys/fs/cgroup/unified"); err == nil {
		return verify.Check{Name: "cgroups", OK: true, Value: "v1 with a v2 hierarchy (hybrid)", Advice: "the allowlist scheme does not use cgroups; docker enforces memory, pids and cpus with them"}
	}
	return verify.Check{Name: "cgroups", OK: true, Value: "v1"}
}

// ownerUID is the uid owning the file st describes.
func ownerUID(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

// unwritableToMe says whether serve's own user, when not root (commands and the file tools then
// run as it), could not create files in the workspace dir.
func unwritableToMe(dir string) bool {
	return os.Geteuid() != 0 && unix.Access(dir, unix.W_OK|unix.X_OK) != nil
}
