package sandbox

// A long-running command under the same layers as a call (`mcpsandbox wrap`, internal/schemes/wrap/sandbox): the
// exec helper starts it in its namespaces with Landlock, seccomp, rlimits and a clean
// environment, but its stdin and stdout are pipes the caller relays, and it lives until the
// caller ends it (or the caller dies: the helper's parent-death signal, and the PID namespace
// whose init it is, take the whole tree with it).

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/mutant"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"golang.org/x/sys/unix"
)

// ServerOptions describe a long-running command.
type ServerOptions struct {
	Binary    string   // the file to execute (absolute, symlinks resolved); argv[0] is Argv[0]
	Argv      []string // the command line
	Env       []string // its environment besides PATH, TMPDIR and the egress proxy's variables
	PATH      string   // "" = FixedPATH
	Dir       string   // its working directory
	ReadDirs  []string // readable besides the system dirs
	ReadFiles []string // readable files besides the system's
	ExecDirs  []string // executable (and readable) besides the system dirs
	RWDirs    []string // writable (not executable); /tmp is added when the host gives a private one
	// DirQuota, when not 0 and the host gives a mount namespace, bounds Dir: a tmpfs of this
	// many bytes (and helper.DirTmpfsInodes files) is mounted on it, gone with the server.
	DirQuota uint64
	Files    int      // RLIMIT_NOFILE; 0 = 4096
	Session  string   // what egress decisions are recorded under
	Stderr   *os.File // where the command's stderr goes (nil: /dev/null)
}

// Server is a running long-lived command.
type Server struct {
	Stdin  io.WriteCloser // the command's stdin
	Stdout io.ReadCloser  // the command's stdout
	Pid    int

	cmd     *exec.Cmd
	ec      *egressCall
	mntNS   *os.File
	tmp     string
	done    chan struct{}
	waitErr error
	once    sync.Once

	ctlTemp     *os.File // the spec socket between start and hand-over
	sessionName string
}

// UID is the uid the commands run as (what a server's private directories must belong to).
func (e *Executor) UID() (uid, gid int) { return e.uid, e.gid }

// PrivateTmp reports whether commands get a private /tmp (a mount namespace of their own).
func (e *Executor) PrivateTmp() bool { return e.attr.has(unix.CLONE_NEWNS) }

// StartServer starts a long-running command under the layers. The caller must Kill it. A lazy
// executor (Options.Lazy) first tries the strongest namespace set without a probe, and probes
// (stepping down as calls do) only if that start fails.
func (e *Executor) StartServer(o ServerOptions) (*Server, error) {
	if e.lazy {
		e.lazy = false
		e.attr = mutateAttr(e.nsTries()[0])
		s, err := e.startServer(o)
		if err == nil {
			close(e.probed)
			return s, nil
		}
		e.log.Debug("the strongest layers did not start the server: probing", "err", err)
		e.probeErr = e.probeLayers()
		close(e.probed)
	}
	if err := e.Ready(); err != nil {
		return nil, err
	}
	return e.startServer(o)
}

func (e *Executor) startServer(o ServerOptions) (*Server, error) {
	bin, err := os.OpenFile(o.Binary, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the server's program %s: %w", o.Binary, err)
	}
	defer bin.Close()
	s := &Server{done: make(chan struct{}), sessionName: o.Session}
	spec, err := e.serverSpec(o, s)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		s.cleanup()
		return nil, fmt.Errorf("the server's stdin: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		s.cleanup()
		return nil, fmt.Errorf("the server's stdout: %w", err)
	}
	s.Stdin, s.Stdout = inW, outR
	err = e.startServerHelper(s, o, inR, outW)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		s.cleanup()
		return nil, err
	}
	if err := e.handOver(s, bin, spec, o.Argv[0]); err != nil {
		s.Kill()
		return nil, err
	}
	return s, nil
}

// serverSpec is the helper's spec for a long-running command.
func (e *Executor) serverSpec(o ServerOptions, s *Server) (helper.Spec, error) {
	path := o.PATH
	if path == "" {
		path = FixedPATH
	}
	env := append([]string{"PATH=" + path}, o.Env...)
	rw := slices.Clone(o.RWDirs)
	mounts := e.PrivateTmp()
	if mounts {
		env = append(env, "TMPDIR=/tmp")
		rw = append(rw, "/tmp")
	} else {
		tmp, err := os.MkdirTemp("", "mcpsandbox-wrap-tmp-")
		if err != nil {
			return helper.Spec{}, fmt.Errorf("create the server's temporary directory: %w", err)
		}
		s.tmp = tmp
		if e.dropUID {
			_ = os.Chown(tmp, e.uid, e.gid)
		}
		env = append(env, "TMPDIR="+tmp)
		rw = append(rw, tmp)
	}
	env = e.egress.withEnv(env)
	if mutated("env-scrub") {
		env = append(env, os.Environ()...)
	}
	files := uint64(o.Files)
	if files == 0 {
		files = 4096
	}
	lims := []helper.Rlimit{
		{Resource: unix.RLIMIT_AS, Value: uint64(e.pol.Limits.Memory)},
		{Resource: unix.RLIMIT_FSIZE, Value: uint64(e.al.MaxFileSize)},
		{Resource: unix.RLIMIT_NOFILE, Value: files},
		{Resource: unix.RLIMIT_CORE, Value: 0},
		{Resource: unix.RLIMIT_MEMLOCK, Value: 0},
	}
	if e.dropUID || e.attr.userNS {
		lims = append(lims, helper.Rlimit{Resource: unix.RLIMIT_NPROC, Value: uint64(e.pol.Limits.Pids)})
	}
	spec := helper.Spec{
		Argv: o.Argv, Env: env, Dir: o.Dir,
		DropUID: e.dropUID, UID: e.uid, GID: e.gid, Rlimits: mutateRlimits(lims),
		NoNetwork: !e.al.AllHosts(),
		ReadDirs:  slices.Concat(systemReadDirs, o.ReadDirs),
		ReadFiles: slices.Concat(systemReadFiles, serverReadFiles, o.ReadFiles),
		ExecFiles: existing(slices.Concat(serverExecDirs, o.ExecDirs)),
		RWDirs:    rw, DevFiles: devFiles,
	}
	e.egress.apply(&spec)
	if mounts {
		spec.Mounts, spec.TmpSize, spec.DirTmpfs = true, e.tmpSize(), o.DirQuota
	}
	return spec, nil
}

// serverExecDirs are the system dirs a server may execute from (npx runs npm's scripts through
// sh; a server may run git or python): read and execute, never write.
var serverExecDirs = []string{"/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin", "/sbin", "/usr/lib", "/usr/libexec", "/lib", "/lib64", "/usr/lib64", "/usr/local/lib"}

// serverReadFiles are host facts servers read at start (user and host names, resolver).
var serverReadFiles = []string{"/etc/passwd", "/etc/group", "/etc/hosts", "/etc/resolv.conf", "/etc/host.conf", "/etc/ssl/openssl.cnf"}

func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// startServerHelper starts the helper with the server's pipes.
func (e *Executor) startServerHelper(s *Server, o ServerOptions, stdin, stdout *os.File) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("spec socket: %w", err)
	}
	ctl, child := os.NewFile(uintptr(fds[0]), "spec-ctl"), os.NewFile(uintptr(fds[1]), "spec")
	defer child.Close()
	cmd := exec.Command(e.helper, helper.Arg)
	cmd.Env = append([]string{"GOMAXPROCS=1"}, mutant.HelperEnv()...)
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout = stdin, stdout
	if o.Stderr != nil {
		cmd.Stderr = o.Stderr
	}
	cmd.ExtraFiles = []*os.File{child}
	cmd.SysProcAttr = e.attr.sysProcAttr()
	e.egress.procAttr(e.attr, cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		ctl.Close()
		return fmt.Errorf("start exec helper %s: %w", e.helper, err)
	}
	s.cmd, s.Pid = cmd, cmd.Process.Pid
	s.ctlTemp = ctl
	if e.attr.has(unix.CLONE_NEWNS) {
		s.mntNS, _ = os.Open(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid))
	}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	return nil
}

// handOver sends the helper the program and the spec and waits for the exec (or its failure).
func (e *Executor) handOver(s *Server, bin *os.File, spec helper.Spec, name string) error {
	ctl := s.ctlTemp
	s.ctlTemp = nil
	defer ctl.Close()
	s.ec = e.egress.call(s.sessionName)
	if err := unix.Sendmsg(int(ctl.Fd()), []byte{0}, unix.UnixRights(int(bin.Fd())), nil, 0); err != nil {
		return fmt.Errorf("hand the server to the exec helper: %w", err)
	}
	if err := json.NewEncoder(ctl).Encode(spec); err != nil {
		return fmt.Errorf("hand the server to the exec helper: %w", err)
	}
	_ = unix.Shutdown(int(ctl.Fd()), unix.SHUT_WR)
	if msg := s.ec.report(ctl); len(msg) > 0 {
		return helperFailure(name, string(msg))
	}
	return nil
}

// Done is closed when the command's helper (PID 1 of its namespace) has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Err is how the command ended (after Done).
func (s *Server) Err() error { return s.waitErr }

// Kill ends the command's whole tree and releases what it held; safe more than once.
func (s *Server) Kill() {
	s.once.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			groupKill(s.cmd.Process.Pid)
			_ = s.cmd.Process.Kill()
			select {
			case <-s.done:
			case <-time.After(5 * time.Second):
			}
			groupKill(s.cmd.Process.Pid)
		}
		if s.Stdin != nil {
			s.Stdin.Close()
		}
		s.ec.close()
		s.cleanup()
	})
}

func (s *Server) cleanup() {
	if s.mntNS != nil {
		s.mntNS.Close()
		s.mntNS = nil
	}
	if s.tmp != "" {
		os.RemoveAll(s.tmp)
		s.tmp = ""
	}
}
