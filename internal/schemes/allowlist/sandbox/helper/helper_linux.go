package helper

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"runtime"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// specFD is the helper's end of a unix socketpair. The server sends one byte carrying the pinned
// binary's descriptor (SCM_RIGHTS), then the JSON Spec, then closes. A helper can thus be started
// ahead of the call (warm) and handed the exact file the server hashed when the call comes.
const specFD = 3

// Spec is everything the helper applies before it becomes the command.
type Spec struct {
	Argv      []string `json:"argv"`
	Env       []string `json:"env"`
	Dir       string   `json:"dir"`
	DropUID   bool     `json:"drop_uid"`
	UID       int      `json:"uid"`
	GID       int      `json:"gid"`
	Rlimits   []Rlimit `json:"rlimits"`
	Nice      int      `json:"nice"`
	NoNetwork bool     `json:"no_network"`
	// EgressPort: with a host list, the helper listens on 127.0.0.1:EgressPort and hands the
	// listener to serve's egress proxy (egress_linux.go); 0 = no egress.
	EgressPort int `json:"egress_port,omitempty"`
	// Landlock
	ReadDirs  []string `json:"read_dirs"`
	ReadFiles []string `json:"read_files"`
	ExecFiles []string `json:"exec_files"`
	RWDirs    []string `json:"rw_dirs"`
	DevFiles  []string `json:"dev_files"`
	Probe     bool     `json:"probe"` // apply everything, report, exit instead of exec
	// Mounts: the helper is in a mount namespace of its own. It gets an empty tmpfs of TmpSize
	// bytes on /tmp (paths under the host's /tmp it needs are bound back), and ROBinds (existing
	// protected workspace paths) are bound read-only onto themselves, so the kernel refuses
	// writes to them whatever the command is.
	Mounts  bool     `json:"mounts"`
	TmpSize uint64   `json:"tmp_size"`
	ROBinds []string `json:"ro_binds"`
	// Overlay, when set, is the overlayfs mount data of the call's workspace layer (package
	// wslayer): mounted on Dir before the read-only binds, so every write lands in the layer.
	Overlay string `json:"overlay,omitempty"`
	// DirTmpfs, when not 0, is the size of a tmpfs mounted on Dir (a long-lived server's private
	// HOME, internal/schemes/wrap/sandbox): what the command writes there is bounded in bytes and inodes, held in
	// memory, and gone with the mount namespace.
	DirTmpfs uint64 `json:"dir_tmpfs,omitempty"`
}

// Rlimit is one resource limit.
type Rlimit struct {
	Resource int    `json:"resource"`
	Value    uint64 `json:"value"`
}

// init runs the helper when this binary was started as one: in package initialisation, before
// the packages this one does not import are initialised. A helper is started ahead of every
// call (the warm helper) and competes with the running call for the CPU; the mcpsandbox binary's
// full initialisation (the Docker client's, the MCP SDK's, the policy's) cost about 20 ms more
// than this package's own dependencies, for nothing the helper uses. cmd/mcpsandbox imports this
// package first.
func init() {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		Main()
	}
}

// Main runs in the re-executed binary. It never returns. Failures are written to the spec
// socket, never to the command's stdout or stderr: serve reports them as errors, and a command
// cannot forge one. The socket is close-on-exec, so serve reads EOF when the exec succeeded.
func Main() {
	runtime.LockOSThread() // everything below is per-thread state that execve must inherit; never unlocked
	if err := helper(); err != nil {
		_, _ = unix.Write(specFD, []byte("sandbox setup failed: "+err.Error()))
		os.Exit(126)
	}
	os.Exit(0) // probe
}

// warmUp does, before a call's spec arrives, what the first decoding of a Spec costs whatever
// the spec: encoding/json builds its decoders for the type (in a new process, most of the
// decoding's 0.9-2.2 ms, measured through a warm helper). A warm helper waits for its call
// here, so this is off the call's path.
func warmUp() {
	var s Spec
	_ = json.Unmarshal(warmSpec, &s)
}

// warmSpec holds every field of Spec, so that each one's decoder is built.
var warmSpec = []byte(`{"argv":["x"],"env":["x"],"dir":"x","drop_uid":true,"uid":1,"gid":1,"rlimits":[{"resource":1,"value":1}],` +
	`"nice":1,"no_network":true,"egress_port":1,"read_dirs":["x"],"read_files":["x"],"exec_files":["x"],"rw_dirs":["x"],` +
	`"dev_files":["x"],"probe":false,"mounts":true,"tmp_size":1,"ro_binds":["x"],"overlay":"x","dir_tmpfs":1}`)

// execFailMsg is filled before the rlimits with everything but the errno, so that a failed exec
// under RLIMIT_AS reports without allocating: "exec failed: errno NNN".
var execFailMsg [32]byte

func execFailed(errno unix.Errno) {
	n := copy(execFailMsg[:], "exec failed: errno ")
	d := uint64(errno)
	var digits [20]byte
	i := len(digits)
	for {
		i--
		digits[i] = byte('0' + d%10)
		d /= 10
		if d == 0 {
			break
		}
	}
	n += copy(execFailMsg[n:], digits[i:])
	unix.RawSyscall(unix.SYS_WRITE, specFD, uintptr(unsafe.Pointer(&execFailMsg[0])), uintptr(n))
	unix.RawSyscall(unix.SYS_EXIT_GROUP, 126, 0, 0)
}

func helper() error {
	warmUp()
	binaryFD, err := recvFD(specFD)
	if err != nil {
		return fmt.Errorf("receive binary: %w", err)
	}
	// A warm helper may have been started at the lowest priority (serve's refill): the call is
	// here now. Best effort; the policy's nice is applied below.
	_ = unix.Setpriority(unix.PRIO_PROCESS, 0, 0)
	f := os.NewFile(specFD, "spec")
	var s Spec
	if err := json.NewDecoder(f).Decode(&s); err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	unix.CloseOnExec(specFD) // kept open for errors; closed by the exec itself
	var pr *prober
	if s.Probe {
		pr = probeStart()
	}

	if s.Mounts {
		if err := privateMounts(&s); err != nil {
			return err
		}
	}
	if err := egressListen(&s); err != nil {
		return err
	}
	dropCaps(&s)

	if s.Nice != 0 {
		_ = unix.Setpriority(unix.PRIO_PROCESS, 0, s.Nice) // best effort: politeness, not a security layer
	}

	// Landlock: the ruleset is built while still privileged enough to open every path.
	rsFD, rsFlags, abi, err := landlockRuleset(&s)
	if err != nil {
		return err
	}
	if pr != nil {
		pr.beforeRestrict(&s)
	}
	if err := unix.Chdir(s.Dir); err != nil {
		return fmt.Errorf("enter workspace %s: %w", s.Dir, err)
	}
	if s.DropUID && !mutated("drop-uid") {
		// Per-thread raw syscalls: this thread execs, so its credentials are the command's.
		if _, _, e := unix.RawSyscall(unix.SYS_SETGROUPS, 0, 0, 0); e != 0 {
			return fmt.Errorf("setgroups: %w", e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESGID, uintptr(s.GID), uintptr(s.GID), uintptr(s.GID)); e != 0 {
			return fmt.Errorf("setresgid %d: %w", s.GID, e)
		}
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, uintptr(s.UID), uintptr(s.UID), uintptr(s.UID)); e != 0 {
			return fmt.Errorf("setresuid %d: %w", s.UID, e)
		}
	}
	// A credential change clears the parent-death signal: set it again so the tree dies with serve.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("set parent-death signal: %w", err)
	}
	if !mutated("no-new-privs") {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("set no_new_privs: %w", err)
		}
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("clear dumpable: %w", err)
	}
	landlockDesc := "unavailable on this kernel"
	if rsFD >= 0 && !mutated("landlock") {
		if err := llsys.LandlockRestrictSelf(rsFD, rsFlags); err != nil {
			return fmt.Errorf("landlock restrict: %w", err)
		}
		unix.Close(rsFD)
		landlockDesc = fmt.Sprintf("ABI %d", abi)
	}
	prog, err := seccompFilterNet(s.NoNetwork && !mutated("seccomp-socket"), s.EgressPort != 0)
	if err != nil {
		return err
	}
	if err := installSeccomp(prog); err != nil {
		return err
	}
	if pr != nil {
		pr.rep.LandlockABI, pr.rep.Landlock = abi, landlockDesc
		pr.afterRestrict(&s)
		if err := pr.probeRlimits(&s); err != nil {
			return err
		}
		return json.NewEncoder(os.Stdout).Encode(pr.rep)
	}
	// Everything the exec needs is allocated before the limits: under RLIMIT_AS the Go runtime
	// itself may no longer be able to grow.
	empty, err := unix.BytePtrFromString("")
	if err != nil {
		return err
	}
	argvp, err := CStrings(s.Argv)
	if err != nil {
		return fmt.Errorf("argv: %w", err)
	}
	envp, err := CStrings(s.Env)
	if err != nil {
		return fmt.Errorf("env: %w", err)
	}
	// Every descriptor but 0-2 closes at the exec, also any serve inherited without
	// close-on-exec (best effort: kernels before 5.11 lack close_range).
	if !mutated("close-fds") {
		_ = unix.CloseRange(3, 0xffffffff, 1<<2) // CLOSE_RANGE_CLOEXEC
	}
	for _, r := range s.Rlimits {
		lim := unix.Rlimit{Cur: r.Value, Max: r.Value}
		if err := unix.Setrlimit(r.Resource, &lim); err != nil {
			return fmt.Errorf("setrlimit %d=%d: %w", r.Resource, r.Value, err)
		}
	}
	// Exec exactly the file the server hashed: no path lookup, nothing to swap in between.
	// After the rlimits nothing may allocate: a failure is reported by raw syscalls only.
	execFailed(execveat(binaryFD, empty, argvp, envp))
	return nil // not reached
}

// privateMounts gives this mount namespace an empty, size-capped /tmp and read-only protected
// paths. Mounts do not propagate back to the host (the root is made private first).
func privateMounts(s *Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// Paths under the host's /tmp that the call needs (a workspace there, say) are held open
	// and bound back on top of the new tmpfs.
	type keep struct {
		path string
		fd   int
		dir  bool
	}
	var keeps []keep
	var paths []string
	var dirs []bool
	for _, p := range TmpPaths(s) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // optional paths may be missing
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			unix.Close(fd)
			continue
		}
		keeps = append(keeps, keep{p, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR})
		paths, dirs = append(paths, p), append(dirs, st.Mode&unix.S_IFMT == unix.S_IFDIR)
	}
	kept := keeps[:0]
	for i, k := range keeps {
		if Covered(i, paths, dirs) {
			unix.Close(k.fd)
		} else {
			kept = append(kept, k)
		}
	}
	keeps = kept
	opts, _ := TmpfsOptions(s) // mountTmp applies the private-tmp mutant
	if err := mountTmp(opts); err != nil {
		return fmt.Errorf("mount a private /tmp: %w", err)
	}
	for _, k := range keeps {
		if k.dir {
			if err := os.MkdirAll(k.path, 0o755); err != nil {
				return fmt.Errorf("bind %s back under the private /tmp: %w", k.path, err)
			}
		} else {
			if err := os.MkdirAll(path.Dir(k.path), 0o755); err != nil {
				return fmt.Errorf("bind %s back under the private /tmp: %w", k.path, err)
			}
			// mknod, not open(O_CREAT): an open of what is already there (a FIFO) can wait.
			if err := unix.Mknod(k.path, unix.S_IFREG|0o644, 0); err != nil && !errors.Is(err, unix.EEXIST) {
				return fmt.Errorf("bind %s back under the private /tmp: %w", k.path, err)
			}
		}
		if err := unix.Mount(fmt.Sprintf("/proc/self/fd/%d", k.fd), k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s back under the private /tmp: %w", k.path, err)
		}
		unix.Close(k.fd)
	}
	if err := mountDirTmpfs(s); err != nil {
		return err
	}
	if s.Overlay != "" {
		if err := unix.Mount("overlay", s.Dir, "overlay", unix.MS_NOSUID|unix.MS_NODEV, s.Overlay); err != nil {
			return fmt.Errorf("mount the call's workspace layer (overlayfs) on %s: %w", s.Dir, err)
		}
	}
	for _, d := range Pinned(s) {
		if err := unix.Mount(d, d, "", unix.MS_BIND, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("pin %s in place: %w", d, err)
		}
	}
	for _, p := range mutateROBinds(s.ROBinds) {
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone since the server looked: nothing to protect
			}
			return fmt.Errorf("protect %s: %w", p, err)
		}
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
			return fmt.Errorf("protect %s read-only: %w", p, err)
		}
	}
	return nil
}

// execveat(fd, "", argv, envp, AT_EMPTY_PATH); returns only on failure, without allocating.
func execveat(fd int, empty *byte, argvp, envp []*byte) unix.Errno {
	_, _, errno := unix.RawSyscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return errno
}

func landlockRuleset(s *Spec) (fd int, flags uint32, abi int, err error) {
	abi, err = llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return -1, 0, 0, nil // no Landlock: the other layers still apply; --check reports it
	}
	cfg := landlock.V11
	if !s.NoNetwork || mutated("landlock-net") {
		cfg.HandledAccessNet = 0
	}
	cfg = cfg.BestEffort()
	const (
		read = llsys.AccessFSReadFile | llsys.AccessFSReadDir
		exec = llsys.AccessFSExecute | llsys.AccessFSReadFile
		dev  = llsys.AccessFSReadFile | llsys.AccessFSWriteFile | llsys.AccessFSTruncate
	)
	// The workspace: everything but executing what is in it.
	rw := landlock.V11.HandledAccessFS &^ landlock.AccessFSSet(llsys.AccessFSExecute)
	if mutated("landlock-exec") {
		rw = landlock.V11.HandledAccessFS
	}
	dirs, files := splitReadDirs(s.ReadDirs)
	rules := []landlock.Rule{
		landlock.PathAccess(read, dirs...).IgnoreIfMissing(),
		landlock.PathAccess(llsys.AccessFSReadFile, append(files, s.ReadFiles...)...).IgnoreIfMissing(),
		landlock.PathAccess(exec, s.ExecFiles...),
		landlock.PathAccess(dev, s.DevFiles...).IgnoreIfMissing(),
		landlock.PathAccess(rw, s.RWDirs...),
	}
	rules = append(rules, egressLandlock(s)...)
	rules = append(rules, mutantRules()...)
	fd, flags, err = cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, abi, fmt.Errorf("build landlock ruleset: %w", err)
	}
	return fd, flags, abi, nil
}

// splitReadDirs moves the files out of a list of readable directories (a policy's read_paths
// may name a file): Landlock refuses a directory's rights on a file, and the whole ruleset with
// it. Missing paths stay (the rule ignores them).
func splitReadDirs(paths []string) (dirs, files []string) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			files = append(files, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	return dirs, files
}

// recvFD reads the one-byte message carrying a descriptor (close-on-exec).
func recvFD(sock int) (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return -1, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("no descriptor sent (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return -1, fmt.Errorf("no descriptor sent (%v)", err)
	}
	return fds[0], nil
}

// CStrings is a NULL-terminated array of C strings (argv, envp).
func CStrings(ss []string) ([]*byte, error) {
	out := make([]*byte, len(ss)+1)
	for i, s := range ss {
		p, err := unix.BytePtrFromString(s)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// mountDirTmpfs mounts Spec.DirTmpfs on the working directory, owned by the command's uid.
func mountDirTmpfs(s *Spec) error {
	if s.DirTmpfs == 0 || mutated("dir-tmpfs") {
		return nil
	}
	uid, gid := os.Getuid(), os.Getgid()
	if s.DropUID {
		uid, gid = s.UID, s.GID
	}
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0700,uid=%d,gid=%d", s.DirTmpfs, DirTmpfsInodes, uid, gid)
	if err := unix.Mount("tmpfs", s.Dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount a size-capped tmpfs on %s: %w", s.Dir, err)
	}
	return nil
}

// DirTmpfsInodes caps the files of Spec.DirTmpfs: empty files take no bytes but kernel memory.
const DirTmpfsInodes = 1 << 16
