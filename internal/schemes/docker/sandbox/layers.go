package sandbox

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/mcpsandbox/mcpsandbox/executor"
)

// Layer names, shared with explain's threat table (no bare strings across packages).
const (
	LayerEngine       = "docker engine"
	LayerImage        = "image"
	LayerRuntime      = "runtime"
	LayerNetwork      = "network"
	LayerReadOnlyRoot = "read-only root"
	LayerTmpfs        = "tmpfs /tmp"
	LayerUser         = "non-root user"
	LayerCaps         = "capabilities dropped"
	LayerNoNewPrivs   = "no-new-privileges"
	LayerSeccomp      = "seccomp"
	LayerMemory       = "memory limit"
	LayerPids         = "pids limit"
	LayerCPU          = "cpu quota"
	LayerInit         = "init"
	LayerUlimits      = "ulimits"
	LayerEnv          = "no host environment"
	LayerWorkspace    = "workspace mount"
	LayerPool         = "pool"
)

// LayerIDs lists every layer the executor reports, in its order.
var LayerIDs = []string{LayerEngine, LayerImage, LayerRuntime, LayerNetwork, LayerReadOnlyRoot, LayerTmpfs, LayerUser,
	LayerCaps, LayerNoNewPrivs, LayerSeccomp, LayerMemory, LayerPids, LayerCPU, LayerInit, LayerUlimits, LayerEnv,
	LayerWorkspace, LayerPool}

// VMRuntime is the first of names that does not share the host kernel with the container (runsc
// before the others), "" when none does.
func VMRuntime(names []string) string {
	slices.Sort(names)
	for _, n := range names {
		if n == "runsc" {
			return n
		}
	}
	for _, n := range names {
		if vmRuntimes[n] {
			return n
		}
	}
	return ""
}

// vmRuntimes are runtimes that do not share the host kernel with the container.
var vmRuntimes = map[string]bool{"runsc": true, "kata": true, "kata-runtime": true, "kata-qemu": true, "kata-fc": true, "io.containerd.kata.v2": true, "io.containerd.runsc.v1": true}

// OwnKernel names the kernel a runtime registered under this name puts between the program and
// the host's ("gVisor's kernel (runsc)"), or "" for one that shares the host's (runc, crun).
func OwnKernel(runtime string) string {
	switch {
	case !vmRuntimes[runtime]:
		return ""
	case strings.Contains(runtime, "runsc"):
		return "gVisor's kernel (" + runtime + ")"
	}
	return "the guest kernel of " + runtime
}

// inspectLayers creates (never starts) one container from the policy's spec, asks the engine
// what it recorded, removes it, and reports the layers from that record: what is in force is
// what the engine says, not what serve meant to ask for.
func (e *Executor) inspectLayers(ctx context.Context, version, api, imageID string, secOpts []string,
	memOK, swapOK, pidsOK, cpuOK bool) ([]executor.Layer, error) {
	labels := e.me.labels()
	probe := &box{callID: "layer-probe-" + randHex(4)}
	labels[LabelCall] = probe.callID
	s, err := e.boxSpec(probe, probe.callID)
	if err != nil {
		return nil, err
	}
	cfg, hc := s.build(randHex(16), labels, false)
	cr, err := e.eng.API.ContainerCreate(ctx, cfg, hc, nil, nil, "")
	if err != nil {
		probe.eg.close()
		probe.removed()
		return nil, fmt.Errorf("create a container from %s to check its settings: %w", e.spec.image, e.eng.Unreachable(err))
	}
	e.tracked.Add(1)
	probe.id = cr.ID
	defer e.destroy(probe)
	ins, err := e.eng.API.ContainerInspect(ctx, cr.ID)
	if err != nil {
		return nil, fmt.Errorf("inspect the probe container: %w", e.eng.Unreachable(err))
	}
	h, c := ins.HostConfig, ins.Config
	if h == nil || c == nil {
		return nil, fmt.Errorf("the engine at %s returned no configuration for container %.12s", e.eng.Where(), cr.ID)
	}
	seccomp, nnp := seccompOn(secOpts, h.SecurityOpt), noNewPrivs(h.SecurityOpt)
	capsAll := len(h.CapAdd) == 0 && len(h.CapDrop) == 1 && strings.EqualFold(strings.TrimPrefix(strings.ToUpper(h.CapDrop[0]), "CAP_"), "ALL")
	root := dksec.RootUser(c.User) // "00:00" is root too: the engine reads the uid as a number
	userDetail := "runs as " + e.spec.describeUser()
	if !root {
		if why, isRoot := e.namedUser(ctx, cr.ID, c.User); why != "" {
			root = isRoot
			userDetail = "runs as " + c.User + ", " + why
		}
	}
	var pids int64
	if h.PidsLimit != nil {
		pids = *h.PidsLimit
	}
	ul := []string{}
	for _, u := range h.Ulimits {
		ul = append(ul, fmt.Sprintf("%s=%d", u.Name, u.Hard))
	}
	leaked := leakedEnv(c.Env)
	envHost := len(leaked) > 0
	tmp := h.Tmpfs["/tmp"]
	hostInit := h.Init != nil && *h.Init
	ls := []executor.Layer{
		{Name: LayerEngine, Active: true, Detail: fmt.Sprintf("Docker %s (API %s) at %s", version, api, e.eng.Where())},
		{Name: LayerImage, Active: true, Detail: fmt.Sprintf("%s (%.19s)", e.spec.image, imageID)},
		runtimeLayer(h.Runtime),
		e.networkLayer(string(h.NetworkMode), h.Mounts, s.egressDir),
		readOnlyLayer(h.ReadonlyRootfs, h.ReadonlyPaths, diskVolumes(ins.Mounts)),
		{Name: LayerTmpfs, Active: strings.Contains(tmp, "nosuid") && strings.Contains(tmp, "nodev") && strings.Contains(tmp, "size="), Detail: "/tmp tmpfs " + tmp},
		{Name: LayerUser, Active: !root, Detail: userDetail},
		{Name: LayerCaps, Active: capsAll, Detail: fmt.Sprintf("cap-drop %v, cap-add %v", h.CapDrop, h.CapAdd)},
		{Name: LayerNoNewPrivs, Active: nnp, Detail: "setuid binaries cannot raise privileges"},
		e.seccompLayer(seccomp, ownSeccomp(h.SecurityOpt)),
		{Name: LayerMemory, Active: memOK && swapOK && h.Memory > 0 && h.MemorySwap == h.Memory,
			Detail: fmt.Sprintf("%s, swap none%s%s", e.memText, e.gvisorMemoryNote(), missing(memOK && swapOK, "the engine cannot enforce memory+swap limits here"))},
		e.pidsLayer(pids, pidsOK),
		{Name: LayerCPU, Active: cpuOK && h.NanoCPUs > 0, Detail: fmt.Sprintf("%g CPUs%s", float64(h.NanoCPUs)/1e9, missing(cpuOK, "the engine cannot enforce CPU quota here"))},
		{Name: LayerInit, Active: !hostInit && watchdogFirst(c), Detail: onOff(!hostInit && watchdogFirst(c),
			"the watchdog is the container's pid 1: it reaps every orphan, ends the container when serve goes or the call overruns its timeout, and nothing in the container can stop or kill it (an image without python3 runs the shell wrapper as pid 1, whose watchers run as the program's uid)",
			"the container's first process is not serve's watchdog: a program can stop what ends its container when serve is killed")},
		{Name: LayerUlimits, Active: len(h.Ulimits) >= 2, Detail: strings.Join(ul, ", ")},
		{Name: LayerEnv, Active: !envHost, Detail: onOff(!envHost, "only LANG, HOME, PYTHONDONTWRITEBYTECODE, the engine's HOSTNAME and the image's own variables",
			"serve's own variables reached the container: "+strings.Join(leaked, ", "))},
		e.workspaceLayer(h.Mounts),
		{Name: LayerPool, Active: true, Detail: poolDetail(dksec.Of(e.pol).Pool)},
	}
	f := offFacts{network: string(h.NetworkMode), readOnly: h.ReadonlyRootfs, root: root, seccompEngine: seccomp,
		memOK: memOK && swapOK, pidsOK: pidsOK, cpuOK: cpuOK, workspaceGap: e.layerGap()}
	for i := range ls {
		if l := &ls[i]; !l.Active && !mutated("docker-layer-off") {
			l.Off = e.offWhy(l.Name, f)
		}
	}
	return ls, nil
}

// offFacts is what the engine recorded on the probe container and what it can enforce: the
// reasons a layer may be off.
type offFacts struct {
	network                             string
	readOnly, root                      bool
	seccompEngine, memOK, pidsOK, cpuOK bool
	workspaceGap                        string // why the workspace has no per-call layer ("" = it could)
}

// offWhy says why the layer named name, not in force, is off (executor.Layer.Off), so the
// doctor's advice is true: the policy's setting, what this engine or host lacks, or "" when serve
// asked the engine for it and the engine did not record it (a gap the probe found).
func (e *Executor) offWhy(name string, f offFacts) string {
	switch name {
	case LayerRuntime:
		return executor.OffByPolicy // docker.runtime names a runtime that shares the host kernel
	case LayerNetwork:
		if f.network != "none" {
			return executor.OffByPolicy
		}
	case LayerReadOnlyRoot:
		if !f.readOnly {
			return executor.OffByPolicy
		}
	case LayerUser:
		if f.root {
			return executor.OffByPolicy
		}
	case LayerSeccomp:
		if !f.seccompEngine || e.spec.gvisor && !e.spec.gvisorSeccomp {
			return executor.OffUnavailable
		}
	case LayerMemory:
		if !f.memOK {
			return executor.OffUnavailable
		}
	case LayerPids:
		if !f.pidsOK {
			return executor.OffUnavailable
		}
	case LayerCPU:
		if !f.cpuOK {
			return executor.OffUnavailable
		}
	case LayerWorkspace:
		if f.workspaceGap != "" || !e.spec.wsWrite { // !wsWrite: a read-only bind read-only at its top only (roBind)
			return executor.OffUnavailable
		}
		return executor.OffByPolicy // docker.workspace_writable without a layer
	}
	return ""
}

// seccompOn: the engine applies its seccomp profile (secOpts, the engine's own security options,
// name one) and the container's options do not make it unconfined.
func seccompOn(secOpts, containerOpts []string) bool {
	seccomp := false
	for _, o := range secOpts {
		seccomp = seccomp || strings.Contains(o, "name=seccomp")
	}
	for _, o := range containerOpts {
		if strings.HasPrefix(o, "seccomp") && strings.Contains(o, "unconfined") {
			seccomp = false
		}
	}
	return seccomp
}

// noNewPrivs: the container's security options set no-new-privileges.
func noNewPrivs(containerOpts []string) bool {
	nnp := false
	for _, o := range containerOpts {
		nnp = nnp || o == "no-new-privileges" || o == "no-new-privileges:true" || o == "no-new-privileges=true"
	}
	return nnp
}

// runtimeLayer: the container's runtime ("" is the engine's default, runc), active when it puts a
// kernel of its own between the program and the host.
func runtimeLayer(rt string) executor.Layer {
	if rt == "" {
		rt = "runc"
	}
	rtDetail := rt + " (docker.runtime): containers share the host kernel (a VM-grade runtime such as gVisor runsc would not)"
	if vmRuntimes[rt] {
		rtDetail = rt + ": a kernel of its own between the program and the host"
	}
	return executor.Layer{Name: LayerRuntime, Active: vmRuntimes[rt], Detail: rtDetail}
}

// leakedEnv names the variables of serve's own environment found in the container's (PATH and
// the variables serve sets itself aside): serve passes none of its own environment.
func leakedEnv(containerEnv []string) []string {
	hostEnv := map[string]bool{}
	for _, kv := range os.Environ() {
		hostEnv[kv] = true
	}
	var leaked []string
	for _, kv := range containerEnv {
		k, _, _ := strings.Cut(kv, "=")
		if hostEnv[kv] && k != "PATH" && k != "LANG" && k != "HOME" && k != "PYTHONDONTWRITEBYTECODE" {
			leaked = append(leaked, k)
		}
	}
	return leaked
}

// networkLayer reports the network as the engine recorded it; with a host list, the proxy's
// socket mount must be there (read-only) and the network none.
func (e *Executor) networkLayer(mode string, mounts []mount.Mount, dir string) executor.Layer {
	l := executor.Layer{Name: LayerNetwork, Active: mode == "none", Detail: networkDetail(mode)}
	if !e.spec.egress {
		return l
	}
	mounted := false
	for _, m := range mounts {
		mounted = mounted || (m.Target == egressMount && m.Source == dir && m.ReadOnly)
	}
	l.Active = l.Active && mounted
	l.Detail = fmt.Sprintf("none: no interfaces but loopback, no DNS; HTTP(S) only to %s (docker.network), through serve's egress proxy "+
		"(it resolves names itself and refuses metadata, loopback and private addresses, IP literals not listed, TLS names that differ from the host)", e.spec.egressHosts)
	if !mounted {
		l.Detail += " — NOT IN FORCE: the engine did not record the proxy's read-only socket mount at " + egressMount
	}
	return l
}

func networkDetail(mode string) string {
	if mode == "none" {
		return "none: no interfaces but loopback"
	}
	return fmt.Sprintf("%q (docker.network): the program can reach what that network reaches", mode)
}

func poolDetail(n int) string {
	if n == 0 {
		return "off: every call creates and starts its container"
	}
	return fmt.Sprintf("%d containers started ahead, each used for one call", n)
}

func onOff(on bool, yes, no string) string {
	if on {
		return yes
	}
	return no
}

func missing(ok bool, why string) string {
	if ok {
		return ""
	}
	return " — NOT ENFORCED: " + why
}

// readOnlyLayer: the root, /sys/fs/cgroup, which crun mounts read-write otherwise, and no
// writable volume on the engine's disk (vols: an image's VOLUME serve did not cover).
func readOnlyLayer(root bool, roPaths, vols []string) executor.Layer {
	cg := slices.Contains(roPaths, cgroupDir)
	l := executor.Layer{Name: LayerReadOnlyRoot, Active: root && cg && len(vols) == 0, Detail: onOff(root, "root filesystem read-only", "root filesystem WRITABLE (docker.read_only = false)")}
	if !cg {
		l.Detail += "; " + cgroupDir + " NOT read-only (the engine did not record it in ReadonlyPaths; crun mounts it writable)"
	}
	if len(vols) > 0 {
		l.Detail += "; " + strings.Join(vols, ", ") + " WRITABLE on the engine's disk, with no size bound (volumes, the image's VOLUME)"
	}
	return l
}

// diskVolumes are the writable volumes of a container other than the workspace's layer: an
// image's VOLUME that no tmpfs covers.
func diskVolumes(ms []container.MountPoint) []string {
	var vs []string
	for _, m := range ms {
		if m.Type == mount.TypeVolume && m.RW && m.Destination != workspaceDir {
			vs = append(vs, m.Destination)
		}
	}
	return vs
}

// seccompLayer says which profile the program meets: serve's (seccomp.go) when the engine
// recorded it on the container, else only the engine's default (whose allow list, in Docker
// 20.10, let io_uring_setup reach the host kernel) — not the layer serve claims. Under gVisor
// the profile the engine records is not applied to the program unless runsc runs with
// --oci-seccomp (measured: Seccomp: 0 in /proc/self/status, and unshare(CLONE_NEWUSER)
// succeeds, which the profile refuses under runc and crun).
func (e *Executor) seccompLayer(engineHas, own bool) executor.Layer {
	l := executor.Layer{Name: LayerSeccomp, Active: engineHas && own, Detail: seccompSummary()}
	switch {
	case !engineHas:
		l.Detail = "the engine reports no seccomp support: no profile applies"
	case e.spec.gvisor && !e.spec.gvisorSeccomp:
		l.Active = false
		l.Detail = "NOT APPLIED to the program: gVisor (runsc) ignores the container's seccomp profile unless its runtimeArgs include --oci-seccomp " +
			"(the program's system calls go to gVisor's own kernel, which filters only its own calls to the host: measured under runsc 20221219, " +
			"io_uring_setup and unshare(CLONE_NEWUSER) are served by gVisor, userfaultfd is ENOSYS, keyctl EACCES, perf_event_open ENODEV — none reaches the host kernel)"
	case !own:
		l.Detail = "NOT IN FORCE: the engine did not record serve's profile on the container; only the engine's default applies " +
			"(Docker 20.10's lets io_uring_setup reach the host kernel)"
	}
	return l
}

// pidsLayer: the engine's limit is on the container's host tasks; under gVisor those are the
// Sentry's, so the policy's count is approximate and reaching it ends the whole sandbox.
func (e *Executor) pidsLayer(recorded int64, ok bool) executor.Layer {
	l := executor.Layer{Name: LayerPids, Active: ok && recorded > 0, Detail: fmt.Sprintf("%d processes%s", recorded, missing(ok, "the engine cannot enforce pids limits here"))}
	if e.spec.gvisor {
		l.Detail = fmt.Sprintf("about %d processes: gVisor (runsc) does not count the program's processes itself; the engine limits its host tasks to %d "+
			"(%d + %d per process of limits.pids), and reaching that ends the whole sandbox%s",
			e.spec.pids, recorded, gvisorBaseTasks, gvisorTasksPerProcess, missing(ok, "the engine cannot enforce pids limits here"))
	}
	return l
}

// gvisorMemoryNote: under gVisor the limit holds gVisor's own kernel too, and the kernel's
// OOM killer ends the whole sandbox, not the process that grew (measured: a shell script
// whose python3 child allocated past the limit lost its own later output; under runc and
// crun only the child is killed and the script goes on).
func (e *Executor) gvisorMemoryNote() string {
	if !e.spec.gvisor {
		return ""
	}
	return "; under gVisor the limit includes gVisor's own kernel, and reaching it ends the whole sandbox, not only the process that grew"
}

// namedUser says what the image makes of a docker.user that names its user by name ("": a numeric
// uid, judged by RootUser), and whether that may be root (uid 0, or a uid it cannot tell: the
// non-root layer is then not reported in force). The engine resolves a name through the container's own /etc/passwd,
// which is the image's: an image may map any name to uid 0 (attack round atk19b). Read from the
// created container (never started), at most maxPasswd bytes of it.
func (e *Executor) namedUser(ctx context.Context, id, user string) (why string, root bool) {
	name, _, _ := strings.Cut(user, ":")
	if name == "" || strings.Trim(name, "0123456789") == "" {
		return "", false
	}
	rc, _, err := e.eng.API.CopyFromContainer(ctx, id, "/etc/passwd")
	if err != nil {
		return fmt.Sprintf("a name the image's /etc/passwd could not be read for (%v): its uid is unknown (set docker.user = %q)", e.eng.Unreachable(err), defaultUser), true
	}
	defer rc.Close()
	tr := tar.NewReader(io.LimitReader(rc, maxPasswd+4096))
	hd, err := tr.Next()
	if err != nil || hd.Typeflag != tar.TypeReg {
		return fmt.Sprintf("a name the image's /etc/passwd, not a plain file there, cannot resolve: its uid is unknown (set docker.user = %q)", defaultUser), true
	}
	sc := bufio.NewScanner(io.LimitReader(tr, maxPasswd))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) >= 3 && f[0] == name {
			if uid, err := strconv.ParseUint(f[2], 10, 32); err == nil && uid == 0 && !mutated("docker-user-name-unresolved") {
				return fmt.Sprintf("which the image's /etc/passwd maps to uid 0: root inside the container (set docker.user = %q)", defaultUser), true
			}
			return "uid " + f[2] + " in the image's /etc/passwd", false
		}
	}
	return fmt.Sprintf("a name the image's /etc/passwd does not hold: the engine refuses to start its containers (set docker.user = %q)", defaultUser), false
}

// maxPasswd bounds what namedUser reads of an image's /etc/passwd.
const maxPasswd = 1 << 20

// watchdogFirst says the container starts serve's entrypoint with the watchdog as its main
// program, which then is pid 1 (no docker-init before it: see build).
func watchdogFirst(c *container.Config) bool {
	return len(c.Entrypoint) >= 3 && c.Entrypoint[2] == entrypoint && len(c.Cmd) == 5 && c.Cmd[4] == watchdogPy
}
