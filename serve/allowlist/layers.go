//go:build linux

package allowlist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/serve"
	"golang.org/x/sys/unix"
)

// nsAttr is how the helper is started: which namespaces it gets.
type nsAttr struct {
	flags  uintptr
	userNS bool
	uid    int
	gid    int
}

func (a nsAttr) sysProcAttr() *syscall.SysProcAttr {
	s := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: a.flags}
	if a.userNS {
		s.UidMappings = []syscall.SysProcIDMap{{ContainerID: a.uid, HostID: a.uid, Size: 1}}
		s.GidMappings = []syscall.SysProcIDMap{{ContainerID: a.gid, HostID: a.gid, Size: 1}}
		s.GidMappingsEnableSetgroups = false
	}
	return s
}

func (a nsAttr) has(f uintptr) bool { return a.flags&f != 0 }

// probeLayers starts the helper in probe mode with the strongest namespace set first and steps
// down until one works, so every call uses what this host really permits.
func (e *Executor) probeLayers() error {
	ns := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !e.al.Network {
		ns |= unix.CLONE_NEWNET
	}
	var tries []nsAttr
	if os.Geteuid() == 0 {
		// A mount namespace first: a private /tmp and read-only protected paths per call.
		tries = append(tries, nsAttr{flags: ns | unix.CLONE_NEWNS}, nsAttr{flags: ns})
	} else {
		tries = append(tries, nsAttr{flags: ns | unix.CLONE_NEWUSER, userNS: true, uid: os.Geteuid(), gid: os.Getegid()})
	}
	tries = append(tries, nsAttr{})
	var errs []string
	for _, a := range tries {
		e.attr = a
		rep, err := e.runProbe()
		if err == nil && e.egress != nil && !a.has(unix.CLONE_NEWNET) {
			err = errNoNetNS
		}
		if err == nil && a.has(unix.CLONE_NEWPID) && rep.PID != 1 {
			err = fmt.Errorf("helper is pid %d, not 1: no PID namespace", rep.PID)
		}
		if err == nil {
			e.probe = rep
			if a.flags == 0 {
				e.log.Warn("namespaces unavailable: commands run without PID/network namespaces", "tried", strings.Join(errs, "; "))
			}
			return nil
		}
		errs = append(errs, err.Error())
	}
	return fmt.Errorf("the exec helper cannot start on this host: %s", strings.Join(errs, "; "))
}

func (e *Executor) runProbe() (ProbeReport, error) {
	pc := e.cmds[e.names[0]]            // validation guarantees one command; a probe never execs it
	devnull, err := os.Open(os.DevNull) // stands in for the binary: a probe never execs
	if err != nil {
		return ProbeReport{}, err
	}
	defer devnull.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := e.spawn(ctx, serve.Call{Timeout: 10 * time.Second, MaxOutput: 64 << 10}, pc, devnull, nil, nil, true)
	if err != nil {
		return ProbeReport{}, err
	}
	if res.ExitCode != 0 {
		return ProbeReport{}, fmt.Errorf("probe exited %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	var rep ProbeReport
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		return ProbeReport{}, fmt.Errorf("probe report %q: %w", res.Stdout, err)
	}
	if e.dropUID && rep.UID != e.uid {
		return rep, errors.New("probe did not drop to the configured uid")
	}
	return rep, nil
}

// Layers implements serve.Executor: what is in force for every call, as measured by the probe.
func (e *Executor) Layers() []serve.Layer {
	<-e.probed
	abi := e.probe.LandlockABI
	ll := func(min int, id, what string) serve.Layer {
		if abi >= min {
			return serve.Layer{Name: id, Active: true, Detail: what}
		}
		return serve.Layer{Name: id, Detail: fmt.Sprintf("not on this kernel (needs Landlock ABI %d, this one has %d); where it is: %s", min, abi, what)}
	}
	// Two network rows: "network isolation" is what the policy asks for, "network namespace"
	// the mechanism that delivers it best.
	netDetail := "network = true in the policy: commands share the host's network"
	if !e.al.Network {
		netDetail = "the policy says network = false; with no network namespace here, Landlock's TCP rules and the seccomp socket() block enforce it"
		if e.attr.has(unix.CLONE_NEWNET) {
			netDetail = "the policy says network = false: TCP, UDP and DNS all fail (enforced by the network namespace below)"
		}
	}
	netDetail = e.egressNetDetail(netDetail)
	user := fmt.Sprintf("commands run as uid %d gid %d (server is root)", e.uid, e.gid)
	if !e.dropUID {
		user = fmt.Sprintf("server is not root: commands run as its uid %d", e.uid)
	}
	fsDetail := "Landlock unavailable on this kernel: only the argument checks keep paths in the workspace"
	if abi >= 1 {
		fsDetail = fmt.Sprintf("ABI %d: write only %s; read system library dirs; execute only the pinned binary", abi, e.ws)
	}
	ls := []serve.Layer{
		{Name: LayerPinnedExec, Active: true, Detail: "argv only, no shell, no PATH lookup; the binary's sha256 is checked on the open file that is exec'd"},
		{Name: LayerCleanEnv, Active: true, Detail: "only allowlist.env plus PATH=" + FixedPATH},
		{Name: LayerUnprivileged, Active: e.dropUID, Detail: user},
		userNSLayer(e.attr.userNS, e.dropUID),
		{Name: LayerPIDNS, Active: e.attr.has(unix.CLONE_NEWPID), Detail: "the command's whole tree (setsid and double-fork included) dies with it"},
		{Name: LayerNetIsolation, Active: !e.al.Network, Detail: netDetail},
		{Name: LayerNetNS, Active: e.attr.has(unix.CLONE_NEWNET), Detail: e.egressNetNSNote("each call gets a new, empty network namespace: no interface but a down loopback")},
		{Name: LayerIPCNS, Active: e.attr.has(unix.CLONE_NEWIPC), Detail: "no shared SysV IPC with the host"},
		{Name: LayerLandlockFS, Active: abi >= 1, Detail: fsDetail},
		ll(3, LayerLandlockTrunc, "files outside the workspace cannot be truncated"),
		ll(4, LayerLandlockTCP, "TCP connect and bind are denied in the kernel"+e.egressTCPNote()),
		ll(6, LayerLandlockScoped, "signals and abstract unix sockets cannot reach processes outside the sandbox"),
		ll(9, LayerLandlockUnix, "pathname unix sockets (ssh-agent, docker.sock) cannot be connected"),
		ll(10, LayerLandlockUDP, "UDP is denied in the kernel"),
		{Name: LayerSeccomp, Active: e.probe.Seccomp, Detail: "ptrace, mount, namespaces, bpf, io_uring, keyrings, kernel modules denied" + e.egressSocketNote(map[bool]string{true: "; socket() denied", false: ""}[!e.al.Network])},
		{Name: LayerNoNewPrivs, Active: e.probe.NoNewPrivs, Detail: "setuid binaries cannot raise privileges"},
		{Name: LayerRlimits, Active: true, Detail: fmt.Sprintf("address space %s, file size %s, 256 open files, CPU time = timeout", e.pol.Limits.Memory, e.al.MaxFileSize)},
		{Name: LayerProcessLimit, Active: e.dropUID || e.attr.userNS, Detail: fmt.Sprintf("at most %d processes for the command's user (RLIMIT_NPROC)", e.pol.Limits.Pids)},
		{Name: LayerCPUShare, Active: false, Detail: fmt.Sprintf("limits.cpus = %g is not enforced by the allowlist scheme (that needs cgroups); commands run at a lower priority (nice %d) and their CPU time is capped by the timeout", e.pol.Limits.CPUs, nice)},
	}
	return append(append(ls, e.moreLayers()...), e.egressLayer())
}

// userNSLayer: a user namespace is how a server that is not root gets the other namespaces; a
// root server needs none, and that is not a gap.
func userNSLayer(active, root bool) serve.Layer {
	l := serve.Layer{Name: LayerUserNS, Active: active, Detail: "lets a server that is not root create the other namespaces"}
	if !active && root {
		l.NotNeeded, l.Detail = true, "not needed: serve runs as root and creates the namespaces itself"
	}
	return l
}
