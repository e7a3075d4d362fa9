package allowlist

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// HelperArg is argv[1] that makes the mcpsandbox binary act as the exec helper.
const HelperArg = "__sandbox-exec"

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
	// Landlock
	ReadDirs  []string `json:"read_dirs"`
	ReadFiles []string `json:"read_files"`
	ExecFiles []string `json:"exec_files"`
	RWDirs    []string `json:"rw_dirs"`
	DevFiles  []string `json:"dev_files"`
	Probe     bool     `json:"probe"` // apply everything, report, exit instead of exec
}

// Rlimit is one resource limit.
type Rlimit struct {
	Resource int    `json:"resource"`
	Value    uint64 `json:"value"`
}

// ProbeReport is what a probe run prints: the layers the helper really applied.
type ProbeReport struct {
	LandlockABI int    `json:"landlock_abi"`
	Landlock    string `json:"landlock"`
	Seccomp     bool   `json:"seccomp"`
	UID         int    `json:"uid"`
	PID         int    `json:"pid"`
	NoNewPrivs  bool   `json:"no_new_privs"`
}

// HelperMain runs in the re-executed binary. It never returns.
func HelperMain() {
	runtime.LockOSThread() // everything below is per-thread state that execve must inherit; never unlocked
	if err := helper(); err != nil {
		fmt.Fprintf(os.Stderr, "mcpsandbox: sandbox setup failed: %v\n", err)
		os.Exit(126)
	}
	os.Exit(0) // probe
}

func helper() error {
	binaryFD, err := recvFD(specFD)
	if err != nil {
		return fmt.Errorf("receive binary: %w", err)
	}
	f := os.NewFile(specFD, "spec")
	var s Spec
	if err := json.NewDecoder(f).Decode(&s); err != nil {
		return fmt.Errorf("read spec: %w", err)
	}
	f.Close()

	if s.Nice != 0 {
		_ = unix.Setpriority(unix.PRIO_PROCESS, 0, s.Nice) // best effort: politeness, not a security layer
	}

	// Landlock: the ruleset is built while still privileged enough to open every path.
	rsFD, rsFlags, abi, err := landlockRuleset(&s)
	if err != nil {
		return err
	}
	if err := unix.Chdir(s.Dir); err != nil {
		return fmt.Errorf("enter workspace %s: %w", s.Dir, err)
	}
	if s.DropUID {
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
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("clear dumpable: %w", err)
	}
	landlockDesc := "unavailable on this kernel"
	if rsFD >= 0 {
		if err := llsys.LandlockRestrictSelf(rsFD, rsFlags); err != nil {
			return fmt.Errorf("landlock restrict: %w", err)
		}
		unix.Close(rsFD)
		landlockDesc = fmt.Sprintf("ABI %d", abi)
	}
	prog, err := seccompFilter(s.NoNetwork)
	if err != nil {
		return err
	}
	if err := installSeccomp(prog); err != nil {
		return err
	}
	if s.Probe {
		return json.NewEncoder(os.Stdout).Encode(ProbeReport{LandlockABI: abi, Landlock: landlockDesc, Seccomp: true,
			UID: unix.Getuid(), PID: unix.Getpid(), NoNewPrivs: true})
	}
	// Everything the exec needs is allocated before the limits: under RLIMIT_AS the Go runtime
	// itself may no longer be able to grow.
	empty, err := unix.BytePtrFromString("")
	if err != nil {
		return err
	}
	argvp, err := cStrings(s.Argv)
	if err != nil {
		return fmt.Errorf("argv: %w", err)
	}
	envp, err := cStrings(s.Env)
	if err != nil {
		return fmt.Errorf("env: %w", err)
	}
	for _, r := range s.Rlimits {
		lim := unix.Rlimit{Cur: r.Value, Max: r.Value}
		if err := unix.Setrlimit(r.Resource, &lim); err != nil {
			return fmt.Errorf("setrlimit %d=%d: %w", r.Resource, r.Value, err)
		}
	}
	// Exec exactly the file the server hashed: no path lookup, nothing to swap in between.
	errno := execveat(binaryFD, empty, argvp, envp)
	return fmt.Errorf("exec %s: %w", s.Argv[0], errno)
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
	if !s.NoNetwork {
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
	rules := []landlock.Rule{
		landlock.PathAccess(read, s.ReadDirs...).IgnoreIfMissing(),
		landlock.PathAccess(llsys.AccessFSReadFile, s.ReadFiles...).IgnoreIfMissing(),
		landlock.PathAccess(exec, s.ExecFiles...),
		landlock.PathAccess(dev, s.DevFiles...).IgnoreIfMissing(),
		landlock.PathAccess(rw, s.RWDirs...),
	}
	fd, flags, err = cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, abi, fmt.Errorf("build landlock ruleset: %w", err)
	}
	return fd, flags, abi, nil
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

// cStrings is a NULL-terminated array of C strings.
func cStrings(ss []string) ([]*byte, error) {
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
