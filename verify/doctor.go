package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/serve/docker/engine"
	"golang.org/x/sys/unix"
)

// Check is one host fact, with what it means for the schemes.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Value  string `json:"value"`
	Advice string `json:"advice,omitempty"`
}

// Doctor inspects the host: what each scheme can rely on here.
func Doctor(ctx context.Context) []Check {
	var cs []Check
	cs = append(cs, kernel(), root(), landlockABI(), userns(),
		namespace("pid namespace", unix.CLONE_NEWPID), namespace("network namespace", unix.CLONE_NEWNET),
		seccompAvail(), cgroupVersion(), DockerEngine(ctx))
	return cs
}

func kernel() Check {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return Check{Name: "kernel", Value: err.Error()}
	}
	return Check{Name: "kernel", OK: true, Value: unix.ByteSliceToString(u.Sysname[:]) + " " + unix.ByteSliceToString(u.Release[:])}
}

func root() Check {
	if os.Geteuid() == 0 {
		return Check{Name: "running as root", OK: true, Value: "yes: commands run as an unprivileged uid, with PID and network namespaces"}
	}
	return Check{Name: "running as root", OK: true, Value: fmt.Sprintf("no (uid %d): commands run as you; namespaces need unprivileged user namespaces", os.Geteuid())}
}

func landlockABI() Check {
	// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) returns the ABI version.
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1)
	if errno != 0 {
		return Check{Name: "landlock", Value: "unavailable: " + errno.Error(),
			Advice: "boot a kernel >= 5.13 with lsm=landlock,...: without it the allowlist scheme cannot confine file access in the kernel"}
	}
	c := Check{Name: "landlock", OK: true, Value: fmt.Sprintf("ABI %d", abi)}
	if abi < 4 {
		c.Advice = "ABI 4 (kernel 6.7) adds TCP restrictions; ABI 6 (6.12) scopes signals and abstract unix sockets"
	}
	return c
}

func userns() Check {
	c := Check{Name: "user namespaces", OK: true, Value: "usable"}
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
func namespace(name string, flag uintptr) Check {
	cmd := exec.Command("/bin/true")
	attr := &syscall.SysProcAttr{Cloneflags: flag}
	if os.Geteuid() != 0 {
		attr.Cloneflags |= unix.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Run(); err != nil {
		return Check{Name: name, Value: "not usable: " + err.Error(),
			Advice: "the allowlist scheme then runs commands without it; run serve as root or enable user namespaces"}
	}
	return Check{Name: name, OK: true, Value: "usable"}
}

func seccompAvail() Check {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil && strings.Contains(string(b), "Seccomp:") {
		return Check{Name: "seccomp", OK: true, Value: "available"}
	}
	return Check{Name: "seccomp", Value: "not reported by the kernel", Advice: "enable CONFIG_SECCOMP_FILTER"}
}

func cgroupVersion() Check {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return Check{Name: "cgroups", OK: true, Value: "v2 (unified)"}
	}
	if _, err := os.Stat("/sys/fs/cgroup/unified"); err == nil {
		return Check{Name: "cgroups", OK: true, Value: "v1 with a v2 hierarchy (hybrid)", Advice: "the allowlist scheme does not use cgroups; docker enforces memory, pids and cpus with them"}
	}
	return Check{Name: "cgroups", OK: true, Value: "v1"}
}

// DockerSocket is the engine's socket: DOCKER_HOST when it is unix://, else the default.
//
// Deprecated: engine.New honours DOCKER_HOST of every kind (tcp with TLS too) and the current
// docker context; use it.
func DockerSocket() string {
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		return strings.TrimPrefix(h, "unix://")
	}
	return "/var/run/docker.sock"
}

// DockerClient is an engine client for a unix socket; timeout 0 means none.
//
// Deprecated: use engine.New, which honours DOCKER_HOST (tcp, TLS) and docker contexts.
func DockerClient(sock string, timeout time.Duration) *engine.Client {
	c, err := engine.NewHost("unix://"+sock, timeout)
	if err != nil {
		return nil // PullImage then uses the environment's engine
	}
	return c
}

// DockerEngine asks the engine the environment names for its version, runtimes and security
// options: what the docker scheme can rely on here.
func DockerEngine(ctx context.Context) Check {
	c := Check{Name: "docker engine"}
	cl, err := engine.New()
	if err != nil {
		c.Value, c.Advice = err.Error(), "needed only for the docker scheme"
		return c
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	v, err := cl.Version(ctx)
	if err != nil {
		c.Value = "not reachable at " + cl.Where()
		c.Advice = "needed only for the docker scheme: " + engine.StartAdvice(cl.Source)
		return c
	}
	c.OK = true
	c.Value = fmt.Sprintf("%s (API %s, client negotiated %s) at %s", v.Version, v.APIVersion, cl.API.ClientVersion(), cl.Where())
	info, err := cl.Info(ctx)
	if err != nil {
		return c
	}
	var rts []string
	for name := range info.Runtimes {
		rts = append(rts, name)
	}
	sort.Strings(rts)
	c.Value += fmt.Sprintf("; runtimes %s (default %s); security %s; cgroups v%s",
		strings.Join(rts, ", "), info.DefaultRuntime, strings.Join(info.SecurityOptions, ", "), info.CgroupVersion)
	var missing []string
	if !info.MemoryLimit {
		missing = append(missing, "memory limits")
	}
	if !info.SwapLimit {
		missing = append(missing, "swap limits")
	}
	if !info.PidsLimit {
		missing = append(missing, "pids limits")
	}
	if !info.CPUCfsQuota {
		missing = append(missing, "CPU quota")
	}
	seccomp := false
	for _, o := range info.SecurityOptions {
		seccomp = seccomp || strings.Contains(o, "name=seccomp")
	}
	if !seccomp {
		missing = append(missing, "seccomp")
	}
	if len(missing) > 0 {
		c.OK = false
		c.Advice = "this engine cannot enforce " + strings.Join(missing, ", ") +
			": enable the cgroup controllers (cgroup_enable=memory swapaccount=1 on the kernel command line) and seccomp, or use another engine"
	} else if _, ok := info.Runtimes["runsc"]; !ok {
		c.Advice = "containers share the host kernel; a VM-grade runtime (gVisor runsc, Kata) narrows that: install it and set docker.runtime"
	}
	return c
}
