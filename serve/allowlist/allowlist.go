//go:build linux

// Package allowlist is the hardened host-exec scheme: run_allowed_command runs only pinned
// binaries, by file descriptor, in a clean environment, confined by the kernel (namespaces,
// Landlock, seccomp, rlimits, an unprivileged uid) through a re-exec'd helper.
package allowlist

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"
)

// FixedPATH is the only PATH commands see; the workspace is never on it.
const FixedPATH = "/usr/local/bin:/usr/bin:/bin"

// System locations every dynamically linked binary may read (never write, never execute).
var (
	systemReadDirs  = []string{"/usr", "/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/ssl/certs", "/usr/share/zoneinfo"}
	systemReadFiles = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/localtime", "/etc/nsswitch.conf", "/etc/mime.types"}
	devFiles        = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}
)

const (
	maxArgs      = 256
	maxArgsBytes = 256 << 10
	nice         = 10
)

// Options configure New.
type Options struct {
	// HelperPath is the mcpsandbox binary to re-exec as the helper; "" = this executable.
	HelperPath string
	Logger     *slog.Logger
}

// Executor implements serve.Executor for the allowlist scheme.
type Executor struct {
	pol     *policy.Policy
	al      *policy.Allowlist
	ws      string // workspace, symlinks resolved
	helper  string
	log     *slog.Logger
	cmds    map[string]*pinned
	names   []string
	uid     int
	gid     int
	dropUID bool
	attr    nsAttr
	probe   ProbeReport
	// probed is closed when the layer probe has finished (probeErr says how): the probe runs
	// while the client initializes, so start-up does not wait for a helper process.
	probed   chan struct{}
	probeErr error
	warm     chan *helperProc // at most one pre-started helper: its start-up is off the call's path
	closed   atomic.Bool
}

type pinned struct {
	policy.Command
	exec     []string // files the command may execute: itself and its ELF interpreter
	readDirs []string // its install prefix (e.g. a pyenv version dir)
	denyRe   []denyPattern

	mu    sync.Mutex
	key   fileKey // identity of the file last hashed
	hash  string
	match bool
}

type fileKey struct {
	dev, ino             uint64
	size                 int64
	mtimeNsec, ctimeNsec int64
}

// New checks the policy against this host and probes which isolation layers work here.
func New(p *policy.Policy, o Options) (*Executor, error) {
	if p.Scheme != policy.SchemeAllowlist {
		return nil, fmt.Errorf("allowlist executor given a %q policy", p.Scheme)
	}
	e := &Executor{pol: p, al: &p.Allowlist, helper: o.HelperPath, log: o.Logger, cmds: map[string]*pinned{}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.helper == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the mcpsandbox binary to use as exec helper: %w", err)
		}
		e.helper = exe
	}
	ws, err := filepath.EvalSymlinks(p.Allowlist.Workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w (create it: mkdir -p %s)", p.Allowlist.Workspace, err, p.Allowlist.Workspace)
	}
	st, err := os.Stat(ws)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory (fix allowlist.workspace)", ws)
	}
	if ws == "/" {
		return nil, errors.New("workspace resolves to /: use a dedicated directory (fix allowlist.workspace)")
	}
	e.ws = ws
	if err := e.chooseUser(st); err != nil {
		return nil, err
	}
	for _, c := range p.Allowlist.Commands {
		pc, err := pin(c)
		if err != nil {
			return nil, err
		}
		e.cmds[c.Name] = pc
		e.names = append(e.names, c.Name)
	}
	e.warm = make(chan *helperProc, 1)
	e.probed = make(chan struct{})
	go func() {
		e.probeErr = e.probeLayers()
		close(e.probed)
		if e.probeErr == nil {
			e.refill(int(p.Limits.MaxOutputBytes))
		}
	}()
	return e, nil
}

// Ready waits for the layer probe and reports whether commands can run on this host. serve
// stops with this error when it is not nil; calls wait for it.
func (e *Executor) Ready() error {
	<-e.probed
	return e.probeErr
}

func (e *Executor) chooseUser(ws os.FileInfo) error {
	if os.Geteuid() != 0 {
		e.uid, e.gid = os.Geteuid(), os.Getegid()
		return nil
	}
	e.dropUID = true
	if e.al.User != "" {
		u, g, _ := strings.Cut(e.al.User, ":")
		e.uid, _ = strconv.Atoi(u)
		e.gid, _ = strconv.Atoi(g)
	} else if sys, ok := ws.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 {
		e.uid, e.gid = int(sys.Uid), int(sys.Gid) // the workspace's owner: the one who can use its files
	} else {
		e.uid, e.gid = 65534, 65534
	}
	if e.uid == 0 {
		return errors.New("allowlist.user is root: commands must not run as root (use e.g. \"65534:65534\")")
	}
	return nil
}

// pin validates one command at startup: safe location, an ELF binary, and its exec dependencies.
func pin(c policy.Command) (*pinned, error) {
	real, err := filepath.EvalSymlinks(c.Path)
	if err != nil {
		return nil, fmt.Errorf("allowlisted command %q: %w (fix its path, or re-run mcpsandbox init)", c.Name, err)
	}
	for _, p := range []string{c.Path, real} {
		if err := CheckOwnership(p); err != nil {
			return nil, fmt.Errorf("allowlisted command %q: %w", c.Name, err)
		}
	}
	pc := &pinned{Command: c, exec: []string{real}}
	f, err := elf.Open(real)
	if err != nil {
		return nil, fmt.Errorf("allowlisted command %q: %s is not an ELF binary (%v); a script cannot be pinned safely — allowlist its interpreter's real binary instead", c.Name, real, err)
	}
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			b, _ := io.ReadAll(prog.Open())
			if interp, err := filepath.EvalSymlinks(string(bytes.TrimRight(b, "\x00"))); err == nil {
				pc.exec = append(pc.exec, interp)
			}
		}
	}
	f.Close()
	// The install prefix (bin/..) holds what the binary loads at run time (e.g. a Python stdlib).
	if prefix := filepath.Dir(filepath.Dir(real)); prefix != "/" {
		pc.readDirs = append(pc.readDirs, prefix)
	}
	for _, g := range c.DenyArgs {
		d, err := compileDeny(g)
		if err != nil {
			return nil, fmt.Errorf("allowlisted command %q: deny_args %q: %w", c.Name, g, err)
		}
		pc.denyRe = append(pc.denyRe, d)
	}
	return pc, nil
}

// CheckOwnership refuses a binary that someone other than root or us could replace: the file and
// every directory above it must be owned by root or the server's user and not writable by others
// (a sticky directory is fine: others cannot rename what they do not own).
func CheckOwnership(path string) error {
	me := uint32(os.Geteuid())
	for p := path; ; p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("check %s: %w", p, err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != 0 && sys.Uid != me {
			return fmt.Errorf("%s is owned by uid %d, who could replace the binary (move the binary to a root-owned location)", p, sys.Uid)
		}
		mode := st.Mode()
		sticky := mode&os.ModeSticky != 0 && mode.IsDir() && p != path
		if mode&0o002 != 0 && mode&os.ModeSymlink == 0 && !sticky {
			return fmt.Errorf("%s is world-writable, so anyone could replace the binary (chmod o-w %s)", p, p)
		}
		if mode&0o020 != 0 && mode&os.ModeSymlink == 0 && sys.Gid != 0 && !sticky {
			return fmt.Errorf("%s is writable by group %d, who could replace the binary (chmod g-w %s)", p, sys.Gid, p)
		}
		if p == "/" {
			return nil
		}
	}
}

// Tools implements serve.Executor.
func (e *Executor) Tools() []serve.Tool {
	names := slices.Clone(e.names)
	desc := fmt.Sprintf("Run one allowlisted program (%s) with arguments, in the workspace directory. "+
		"No shell: arguments are passed literally (no globbing, pipes or redirection). Paths must stay inside the workspace.",
		strings.Join(names, ", "))
	return []serve.Tool{{
		Name:        "run_allowed_command",
		Title:       "Run an allowlisted command",
		Description: desc,
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"command": map[string]any{"type": "string", "enum": names, "description": "which allowlisted program to run"},
				"args": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "maxItems": maxArgs,
					"description": "arguments, passed literally; relative paths are relative to the workspace"},
			},
			"required":             []string{"command"},
			"additionalProperties": false,
		},
		Annotations: &mcp.ToolAnnotations{
			Title:           "Run an allowlisted command",
			ReadOnlyHint:    false, // commands may write inside the workspace
			DestructiveHint: nil,   // default true: a command may overwrite workspace files
			IdempotentHint:  false,
			OpenWorldHint:   &e.al.Network,
		},
		Run: e.run,
	}}
}

// Close implements serve.Executor: the warm helper is stopped.
func (e *Executor) Close() error {
	e.closed.Store(true)
	for {
		select {
		case h := <-e.warm:
			h.discard()
		default:
			return nil
		}
	}
}

type callArgs struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

func (e *Executor) run(ctx context.Context, c serve.Call) (*serve.Result, error) {
	var a callArgs
	if err := serve.DecodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	pc, ok := e.cmds[a.Command]
	if !ok {
		return nil, serve.Refuse("allowlist.commands", "%q is not allowlisted (allowed: %s)", a.Command, strings.Join(e.names, ", "))
	}
	if err := e.checkArgs(pc, a.Args); err != nil {
		return nil, err
	}
	if err := e.Ready(); err != nil {
		return nil, err
	}
	bin, err := pc.open()
	if err != nil {
		return nil, err
	}
	defer bin.Close()
	return e.spawn(ctx, c, pc, bin, a.Args, false)
}

// open opens the binary and checks its sha256 on the open file, which is the file that will be
// exec'd (by descriptor), so nothing can be swapped in between. Hashes are cached by file identity.
func (p *pinned) open() (*os.File, error) {
	f, err := os.OpenFile(p.Path, os.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open pinned binary %s: %w", p.Path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat pinned binary %s: %w", p.Path, err)
	}
	key := fileKey{st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano()}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hash == "" || p.key != key {
		h := sha256.New()
		if _, err := io.Copy(h, io.NewSectionReader(f, 0, st.Size)); err != nil {
			f.Close()
			return nil, fmt.Errorf("hash pinned binary %s: %w", p.Path, err)
		}
		p.key, p.hash = key, hex.EncodeToString(h.Sum(nil))
		p.match = p.hash == p.SHA256
	}
	if !p.match {
		f.Close()
		return nil, serve.Refuse("allowlist.commands["+p.Name+"].sha256",
			"%s changed since it was pinned (sha256 now %.16s…, pinned %.16s…); if the change is legitimate, re-pin it with mcpsandbox init", p.Path, p.hash, p.SHA256)
	}
	return f, nil
}

// helperProc is a started helper waiting for its spec.
type helperProc struct {
	cmd            *exec.Cmd
	ctl            *os.File // server end of the spec socket
	stdout, stderr *serve.CapBuffer
}

// startHelper starts a helper in its namespaces; it blocks until handed a spec.
func (e *Executor) startHelper(maxOutput int) (*helperProc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("spec socket: %w", err)
	}
	ctl, child := os.NewFile(uintptr(fds[0]), "spec-ctl"), os.NewFile(uintptr(fds[1]), "spec")
	defer child.Close()
	h := &helperProc{ctl: ctl, stdout: &serve.CapBuffer{Limit: maxOutput}, stderr: &serve.CapBuffer{Limit: maxOutput}}
	cmd := exec.Command(e.helper, HelperArg)
	cmd.Env = []string{} // the helper needs nothing, and must not carry the server's secrets
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = h.stdout, h.stderr
	cmd.ExtraFiles = []*os.File{child}
	cmd.SysProcAttr = e.attr.sysProcAttr()
	cmd.WaitDelay = 250 * time.Millisecond // a descendant holding stdout open must not hang the call
	if err := cmd.Start(); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("start exec helper %s: %w", e.helper, err)
	}
	h.cmd = cmd
	return h, nil
}

// kill ends the helper's whole tree: it is PID 1 of its namespace (when namespaces work), and
// the group kill covers hosts without a PID namespace.
func (h *helperProc) kill() {
	_ = unix.Kill(-h.cmd.Process.Pid, unix.SIGKILL)
	_ = h.cmd.Process.Kill()
}

// helperFor takes the warm helper if there is one (starting its replacement in the background),
// else starts one now.
func (e *Executor) helperFor(maxOutput int) (*helperProc, error) {
	select {
	case h := <-e.warm:
		go e.refill(maxOutput)
		return h, nil
	default:
		return e.startHelper(maxOutput)
	}
}

func (e *Executor) refill(maxOutput int) {
	if e.closed.Load() {
		return
	}
	h, err := e.startHelper(maxOutput)
	if err != nil {
		e.log.Warn("could not pre-start an exec helper", "err", err)
		return
	}
	select {
	case e.warm <- h:
	default:
		h.discard()
	}
}

func (h *helperProc) discard() {
	h.ctl.Close()
	h.kill()
	_ = h.cmd.Wait()
}

// spawn hands a helper the spec and the binary, and collects the result.
func (e *Executor) spawn(ctx context.Context, c serve.Call, pc *pinned, bin *os.File, args []string, probe bool) (*serve.Result, error) {
	h, err := e.helperFor(c.MaxOutput)
	if err != nil {
		return nil, err
	}
	spec := e.spec(pc, c, args, probe)
	start := time.Now()
	sent := make(chan error, 1)
	go func() { // a goroutine: a spec larger than the socket buffer must not block the timeout
		err := unix.Sendmsg(int(h.ctl.Fd()), []byte{0}, unix.UnixRights(int(bin.Fd())), nil, 0)
		if err == nil {
			err = json.NewEncoder(h.ctl).Encode(spec)
		}
		h.ctl.Close()
		sent <- err
	}()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		h.kill()
		werr = <-done
	}
	_ = unix.Kill(-h.cmd.Process.Pid, unix.SIGKILL) // sweep anything left in the process group
	if err := <-sent; err != nil && werr == nil {
		return nil, fmt.Errorf("hand the call to the exec helper: %w", err)
	}
	res := &serve.Result{
		Stdout: h.stdout.String(), Stderr: h.stderr.String(),
		Truncated:  h.stdout.Dropped() > 0 || h.stderr.Dropped() > 0,
		TimedOut:   errors.Is(ctx.Err(), context.DeadlineExceeded),
		DurationMS: time.Since(start).Milliseconds(),
	}
	var ee *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &ee):
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		} else {
			res.ExitCode = ws.ExitStatus()
		}
	case errors.Is(werr, exec.ErrWaitDelay):
	default:
		return nil, fmt.Errorf("wait for command: %w", werr)
	}
	if res.ExitCode == 126 && strings.HasPrefix(res.Stderr, "mcpsandbox: sandbox setup failed") {
		return nil, fmt.Errorf("%s (run `mcpsandbox serve --policy FILE --check` to see which layer fails here)", strings.TrimSpace(strings.TrimPrefix(res.Stderr, "mcpsandbox: ")))
	}
	return res, nil
}

func (e *Executor) spec(pc *pinned, c serve.Call, args []string, probe bool) Spec {
	env := []string{"PATH=" + FixedPATH}
	keys := make([]string, 0, len(e.al.Env))
	for k := range e.al.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+e.al.Env[k])
	}
	cpuSec := uint64(math.Ceil(c.Timeout.Seconds())) + 1
	lims := []Rlimit{
		{unix.RLIMIT_CPU, cpuSec},
		{unix.RLIMIT_AS, uint64(e.pol.Limits.Memory)},
		{unix.RLIMIT_FSIZE, uint64(e.al.MaxFileSize)},
		{unix.RLIMIT_NOFILE, 256},
		{unix.RLIMIT_CORE, 0},
		{unix.RLIMIT_MEMLOCK, 0},
	}
	if e.dropUID || e.attr.userNS {
		// RLIMIT_NPROC counts per uid: meaningful only for a uid the commands have to themselves.
		lims = append(lims, Rlimit{unix.RLIMIT_NPROC, uint64(e.pol.Limits.Pids)})
	}
	readDirs := slices.Concat(systemReadDirs, pc.readDirs, e.al.ReadPaths)
	return Spec{
		Argv: append([]string{pc.Name}, args...), Env: env, Dir: e.ws,
		DropUID: e.dropUID, UID: e.uid, GID: e.gid, Rlimits: lims, Nice: nice,
		NoNetwork: !e.al.Network,
		ReadDirs:  readDirs, ReadFiles: systemReadFiles, ExecFiles: pc.exec, RWDirs: []string{e.ws}, DevFiles: devFiles,
		Probe: probe,
	}
}
