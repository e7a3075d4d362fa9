//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"

	"github.com/mcpsandbox/mcpsandbox/executor"
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
	// A session of its own (and so a process group, which groupKill ends): no controlling
	// terminal, so nothing in the sandbox can type into serve's or wrap's terminal (TIOCSTI)
	// nor be stopped or signalled by it (atk36 F5).
	s := &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL, Cloneflags: a.flags}
	if mutated("helper-same-session") {
		s.Setsid, s.Setpgid = false, true
	}
	if a.userNS {
		s.UidMappings = []syscall.SysProcIDMap{{ContainerID: a.uid, HostID: a.uid, Size: 1}}
		s.GidMappings = []syscall.SysProcIDMap{{ContainerID: a.gid, HostID: a.gid, Size: 1}}
		s.GidMappingsEnableSetgroups = false
		if a.has(unix.CLONE_NEWNS) {
			// the helper keeps its uid in the namespace, and execve clears a non-zero uid's
			// capabilities: CAP_SYS_ADMIN for its mounts and CAP_DAC_OVERRIDE for overlayfs's
			// work directory (both over its own namespace's files only) are passed as ambient
			// capabilities, and dropped before the command (dropCaps)
			s.AmbientCaps = append(s.AmbientCaps, unix.CAP_SYS_ADMIN, unix.CAP_DAC_OVERRIDE)
		}
	}
	return s
}

func (a nsAttr) has(f uintptr) bool { return a.flags&f != 0 }

// probeLayers starts the helper in probe mode with the strongest namespace set first and steps
// down until one works, so every call uses what this host really permits.
func (e *Executor) probeLayers() error {
	var errs []string
	for _, a := range e.nsTries() {
		a = mutateAttr(a)
		e.attr = a
		rep, err := e.runProbe()
		if err == nil && e.egress != nil && !a.has(unix.CLONE_NEWNET) {
			err = errNoNetNS(e.netKey)
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

// nsTries are the namespace sets to try, strongest first.
func (e *Executor) nsTries() []nsAttr {
	ns := uintptr(unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
	if !e.al.AllHosts() {
		ns |= unix.CLONE_NEWNET
	}
	var tries []nsAttr
	if os.Geteuid() == 0 {
		// A mount namespace first: a private /tmp and read-only protected paths per call.
		tries = append(tries, nsAttr{flags: ns | unix.CLONE_NEWNS}, nsAttr{flags: ns})
	} else {
		// A mount namespace of the user namespace's own first: a private /tmp, read-only
		// protected paths and the transactional workspace's layer for a server that is not root.
		user := nsAttr{flags: ns | unix.CLONE_NEWUSER, userNS: true, uid: os.Geteuid(), gid: os.Getegid()}
		withMounts := user
		withMounts.flags |= unix.CLONE_NEWNS
		if !e.noMountNS {
			tries = append(tries, withMounts)
		}
		tries = append(tries, user)
	}
	return append(tries, nsAttr{})
}

// probeCall is the call a probe runs as.
var probeCall = executor.Call{Timeout: 10 * time.Second, MaxOutput: 64 << 10}

func (e *Executor) runProbe() (helper.ProbeReport, error) {
	pc := e.cmds[e.names[0]]            // validation guarantees one command; a probe never execs it
	devnull, err := os.Open(os.DevNull) // stands in for the binary: a probe never execs
	if err != nil {
		return helper.ProbeReport{}, err
	}
	defer devnull.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := e.spawn(ctx, probeCall, pc, devnull, nil, nil, true)
	if err != nil {
		return helper.ProbeReport{}, err
	}
	if res.ExitCode != 0 {
		return helper.ProbeReport{}, fmt.Errorf("probe exited %d: %s", res.ExitCode, strings.TrimSpace(res.Stderr))
	}
	var rep helper.ProbeReport
	if err := json.Unmarshal([]byte(res.Stdout), &rep); err != nil {
		return helper.ProbeReport{}, fmt.Errorf("probe report %q: %w", res.Stdout, err)
	}
	if e.dropUID && rep.UID != e.uid {
		return rep, errors.New("probe did not drop to the configured uid")
	}
	return rep, nil
}

// Layers implements executor.Executor: what is in force for every call, as measured by the probe.
// A layer is active only when the probe's attempt at what it forbids failed the expected way.
func (e *Executor) Layers() []executor.Layer {
	e.Begin()
	<-e.probed
	m := e.measured()
	abi := e.probe.LandlockABI
	ll := func(min int, id, what string) executor.Layer {
		if abi >= min && m.landlock {
			return executor.Layer{Name: id, Active: true, Detail: what}
		}
		if abi >= min {
			return executor.Layer{Name: id, Detail: "Landlock was not measured in force (" + m.saw("open") + "); it would: " + what}
		}
		return executor.Layer{Name: id, Off: executor.OffUnavailable, Detail: fmt.Sprintf("not on this kernel (needs Landlock ABI %d, this one has %d); where it is: %s", min, abi, what)}
	}
	// Two network rows: "network isolation" is what the policy asks for, "network namespace"
	// the mechanism that delivers it best.
	netDetail := "network = true in the policy: commands share the host's network"
	netIsolated := false
	if !e.al.AllHosts() {
		netIsolated = m.netNS || e.probe.SocketDenied
		netDetail = "the policy says network = false; with no network namespace here, Landlock's TCP rules and the seccomp socket() block enforce it (" + m.saw("socket") + ")"
		if m.netNS {
			netDetail = "the policy says network = false: TCP, UDP and DNS all fail (enforced by the network namespace below)"
		}
		if !netIsolated {
			netDetail = "the policy says network = false, but neither a network namespace nor the socket() block was measured in force (" + m.saw("socket") + ")"
		}
	}
	netDetail = e.egressNetDetail(netDetail)
	fsDetail := "Landlock unavailable on this kernel: only the argument checks keep paths in the workspace"
	if abi >= 1 {
		fsDetail = fmt.Sprintf("ABI %d: write only %s; read system library dirs; execute only the pinned binary (%s)", abi, e.ws, m.saw("open"))
	}
	scDetail := "ptrace, mount, namespaces, bpf, io_uring, keyrings, kernel modules denied"
	if e.probe.SocketDenied {
		scDetail += e.egressSocketNote("; socket() denied")
	}
	scDetail += " (" + m.saw("/proc/thread-self/status: Seccomp", "unshare", "socket") + ")"
	ls := []executor.Layer{
		{Name: LayerPinnedExec, Active: true, Detail: "argv only, no shell, no PATH lookup; the binary's sha256 is checked on the open file that is exec'd" + e.startNote()},
		{Name: LayerCleanEnv, Active: true, Detail: "only allowlist.env plus PATH=" + FixedPATH},
		unprivilegedLayer(e.dropUID, e.uid, e.gid, e.probe.UID),
		userNSLayer(m.ns["user"], e.dropUID),
		{Name: LayerPIDNS, Active: m.ns["pid"] && e.probe.PID == 1, Detail: fmt.Sprintf("the command's whole tree (setsid and double-fork included) dies with it (measured: the helper is pid %d)", e.probe.PID)},
		{Name: LayerNetIsolation, Active: netIsolated, Detail: netDetail},
		{Name: LayerNetNS, Active: m.netNS, Detail: e.egressNetNSNote("each call gets a new, empty network namespace: no interface but a down loopback") + " (" + m.saw("interfaces") + ")"},
		{Name: LayerIPCNS, Active: m.ns["ipc"] && m.ns["uts"], Detail: "no shared SysV IPC with the host"},
		{Name: LayerLandlockFS, Active: abi >= 1 && m.landlock, Detail: fsDetail},
		ll(3, LayerLandlockTrunc, "files outside the workspace cannot be truncated"),
		ll(4, LayerLandlockTCP, "TCP connect and bind are denied in the kernel"+e.egressTCPNote()),
		ll(6, LayerLandlockScoped, "signals and abstract unix sockets cannot reach processes outside the sandbox"),
		ll(9, LayerLandlockUnix, "pathname unix sockets (ssh-agent, docker.sock) cannot be connected"),
		ll(10, LayerLandlockUDP, "UDP is denied in the kernel"),
		{Name: LayerSeccomp, Active: e.probe.Seccomp && (e.al.AllHosts() || e.probe.SocketDenied), Detail: scDetail},
		{Name: LayerNoNewPrivs, Active: e.probe.NoNewPrivs, Detail: "setuid binaries cannot raise privileges (" + m.saw("/proc/thread-self/status: NoNewPrivs") + ")"},
		{Name: LayerRlimits, Active: m.rlimits, Detail: e.rlimitsDetail()},
		{Name: LayerProcessLimit, Active: m.nproc, Detail: fmt.Sprintf("at most %d processes for the command's user (RLIMIT_NPROC; measured: %d)", e.pol.Limits.Pids, e.probe.Rlimits["nproc"])},
		{Name: LayerCPUShare, Active: false, Detail: fmt.Sprintf("limits.cpus = %g is not enforced by the allowlist scheme (that needs cgroups); commands run at a lower priority (nice %d) and their CPU time is capped by the timeout", e.pol.Limits.CPUs, nice)},
	}
	return e.offReasons(append(append(ls, e.moreLayers()...), e.egressLayer(), e.workspaceLayer()))
}

// offReasons says why each layer not in force is off where serve knows more than that its probe
// did not find it: this host gave no namespace of that kind (the probe stepped down past it),
// the kernel's Landlock is too old, serve is not root, the policy turns it off, or the scheme
// never provides it. What is left ("") is a layer the probe tried and found not in force.
func (e *Executor) offReasons(ls []executor.Layer) []executor.Layer {
	noNS := func(f uintptr) bool { return !e.attr.has(f) }
	why := map[string]string{}
	set := func(layer, off string, when bool) {
		if when && why[layer] == "" {
			why[layer] = off
		}
	}
	set(LayerNetIsolation, executor.OffByPolicy, e.al.AllHosts())
	set(LayerNetNS, executor.OffByPolicy, e.al.AllHosts())
	set(LayerNetNS, executor.OffUnavailable, noNS(unix.CLONE_NEWNET))
	set(LayerCPUShare, executor.OffNotProvided, true)
	set(LayerLandlockFS, executor.OffUnavailable, e.probe.LandlockABI < 1)
	set(LayerUserNS, executor.OffUnavailable, noNS(unix.CLONE_NEWUSER))
	set(LayerPIDNS, executor.OffUnavailable, noNS(unix.CLONE_NEWPID))
	set(LayerIPCNS, executor.OffUnavailable, noNS(unix.CLONE_NEWIPC))
	set(LayerProcessLimit, executor.OffUnavailable, !e.dropUID && !e.attr.userNS)
	set(LayerProtectedRO, executor.OffUnavailable, noNS(unix.CLONE_NEWNS))
	for i := range ls {
		if l := &ls[i]; !l.Active && !l.NotNeeded && l.Off == "" {
			l.Off = why[l.Name]
		}
	}
	return ls
}

// measurement is the probe report judged against what serve asked for and its own namespaces.
type measurement struct {
	ns                      map[string]bool // the helper's namespace differs from serve's
	netNS, landlock         bool
	rlimits, nproc          bool
	privateTmp, protectedRO bool
	report                  *helper.ProbeReport
}

// serveNS names serve's own namespace of the kind n. It reads this thread's, never
// /proc/self's: /proc/self is the main thread, which may be the one a namespace is being
// prepared on (netns_linux.go) and, for that moment, in a namespace that is not serve's. A
// thread preparing one is locked to its goroutine, so the thread running this is never it.
func serveNS(n string) (string, error) {
	return os.Readlink("/proc/thread-self/ns/" + n)
}

func (e *Executor) measured() measurement {
	r := &e.probe
	m := measurement{ns: map[string]bool{}, report: r}
	for _, n := range helper.ProbeNamespaces {
		own, err := serveNS(n)
		m.ns[n] = err == nil && r.Namespaces[n] != "" && r.Namespaces[n] != own
	}
	m.netNS = m.ns["net"] && len(r.Interfaces) == 1 && r.Interfaces[0] == "lo"
	m.landlock = r.LandlockABI >= 1 && r.LandlockFS && (r.WriteTried == "" || r.LandlockWrite)
	m.rlimits, m.nproc = true, false
	for _, l := range e.rlimits(probeCall) {
		name := helper.RlimitNames[l.Resource]
		if l.Resource == unix.RLIMIT_AS {
			continue // not set in a probe
		}
		got, ok := r.Rlimits[name]
		if l.Resource == unix.RLIMIT_NPROC {
			m.nproc = ok && got == l.Value
			continue
		}
		if !ok || got != l.Value {
			m.rlimits = false
		}
	}
	m.privateTmp = r.PrivateTmp
	m.protectedRO = r.ReadOnly == r.ROBinds
	return m
}

// saw is what the probe saw in the attempts whose words begin with one of the prefixes.
func (m measurement) saw(prefixes ...string) string {
	var out []string
	for _, s := range m.report.Saw {
		for _, p := range prefixes {
			if strings.HasPrefix(s, p) {
				out = append(out, s)
				break
			}
		}
	}
	if len(out) == 0 {
		return "not tried"
	}
	return "measured: " + strings.Join(out, "; ")
}

// unprivilegedLayer: a root serve's commands run as another, unprivileged user (measured); a
// serve that is not root has no privilege to drop, its commands run as its own user, and that is
// the design, not something this host lacks (trial35 F4: verify said "not available on this host").
func unprivilegedLayer(dropUID bool, uid, gid, measured int) executor.Layer {
	if !dropUID {
		return executor.Layer{Name: LayerUnprivileged, NotNeeded: true,
			Detail: fmt.Sprintf("not needed: serve is not root, so commands run as its own uid %d, never root, confined by the layers below", uid)}
	}
	return executor.Layer{Name: LayerUnprivileged, Active: measured == uid && measured != 0,
		Detail: fmt.Sprintf("commands run as uid %d gid %d (server is root; measured uid %d)", uid, gid, measured)}
}

// userNSLayer: a user namespace is how a server that is not root gets the other namespaces; a
// root server needs none, and that is not a gap.
func userNSLayer(active, root bool) executor.Layer {
	l := executor.Layer{Name: LayerUserNS, Active: active, Detail: "lets a server that is not root create the other namespaces"}
	if !active && root {
		l.NotNeeded, l.Detail = true, "not needed: serve runs as root and creates the namespaces itself"
	}
	return l
}

// startNote says how calls start when that differs from how the probe measured the layers.
func (e *Executor) startNote() string {
	if e.directOK() {
		return "; calls are started by serve itself, between fork and exec, with the exec helper's recipe (the one measured here)"
	}
	return ""
}
