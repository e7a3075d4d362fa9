//go:build linux

// Package sandbox is the allowlist scheme's executor, the hardened host-exec scheme: run_allowed_command runs only pinned
// binaries, by file descriptor, in a clean environment, confined by the kernel (namespaces,
// Landlock, seccomp, rlimits, an unprivileged uid) through a re-exec'd helper.
package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/internal/writable"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"

	"github.com/mcpsandbox/mcpsandbox/internal/mutant"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
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
	// WorkspaceName is what the start log calls the workspace ("" = "allowlist workspace"):
	// wrap's is the wrapped server's private HOME (trial32 F21).
	WorkspaceName string
	// network by name: how the egress proxy is built (egress_linux.go)
	egressOptions
	// viaHelper: tests run calls through the exec helper even where serve would start them
	// directly (rawexec_linux.go), so both ways stay tested.
	viaHelper bool
	// noMountNS: tests take the namespaces without a mount namespace, as a host that gives a
	// user namespace no mounts does.
	noMountNS bool
	// noLayer: tests run calls without the transactional workspace, as a host where overlayfs
	// cannot be mounted on the workspace does.
	noLayer bool
	// Lazy: no layer probe at New; StartServer starts its command under the strongest layers
	// and probes only if that fails (a wrapped server starts one helper sooner).
	Lazy bool
	// DeferProbe: the layer probe starts at Begin, or when Ready, Layers or a call first needs
	// it, instead of at New: serve answers initialize and tools/list before the probe's helper
	// processes take the CPUs (serve.Run calls Begin after them). Every call still waits for
	// the probe, and a failed probe still stops serve.
	DeferProbe bool
	// ServerOnly: the executor only starts long-running servers (StartServer: wrap). Its one
	// command stands in for the layer probe and is never run, so its pin is not checked (a
	// stand-in's "0000…" pin warned that every call would be refused, trial49 F1), and no
	// call's workspace layer is probed; ServerLayers says what a server gets.
	ServerOnly bool
	// NetworkKey is the policy key that lists the hosts, as refusals name it ("" =
	// "allowlist.network"; wrap's is "wrap.network", trial49 F2).
	NetworkKey string
}

// Executor implements executor.Executor for the allowlist scheme.
type Executor struct {
	after   afterWork // work calls leave for after their answers (afterwork_linux.go)
	pol     *policy.Policy
	al      *alsec.Allowlist
	ws      string // workspace, symlinks resolved
	netKey  string // the policy key of the host list (Options.NetworkKey)
	helper  string
	log     *slog.Logger
	cmds    map[string]*pinned
	names   []string
	uid     int
	gid     int
	dropUID bool
	attr    nsAttr
	// viaHelper: run every call through the exec helper (Options.viaHelper).
	viaHelper bool
	noMountNS bool // Options.noMountNS
	noLayer   bool // Options.noLayer
	lazy      bool // Options.Lazy, until the first StartServer
	probe     helper.ProbeReport
	// probed is closed when the layer probe has finished (probeErr says how): the probe runs
	// while the client initializes, so start-up does not wait for a helper process.
	probed   chan struct{}
	probeErr error
	// begin is closed when the probe may start (Options.DeferProbe: at Begin; else at New).
	begin     chan struct{}
	beginOnce sync.Once
	// layerRoot holds the calls' workspace layers; "" = no transactional workspace here, and
	// layerWhy says why (layer_linux.go).
	layerRoot, layerWhy string
	// layerBroken says why every call is refused: the layer could not be made for a passing
	// reason at serve's start (layer_linux.go probeWorkspaceLayer)
	layerBroken    string
	recoveries     wslayer.Recoveries // commits a dead serve left, finished at the start (serve audits them)
	warm           chan *helperProc   // at most one pre-started helper: its start-up is off the call's path
	warmMu         sync.Mutex         // orders a refill's start with Close
	held           atomic.Int32       // calls' killed processes not yet ended (reapWithin)
	warmMaking     sync.WaitGroup     // Close waits for it: a warm helper being started
	netns          chan *callNS       // prepared network (IPC, UTS) namespaces for direct starts (netns_linux.go); nil: none
	netnsFilling   atomic.Bool
	userNSFails    atomic.Int32       // direct starts in a row whose user namespace failed (userNSRefused)
	userNSOffUntil atomic.Int64       // Unix ns: until then, calls go through the helper (userNSRefused)
	layers         chan preparedLayer // workspace layers made ahead of calls (layerpool_linux.go)
	layersFilling  atomic.Bool
	layersMu       sync.Mutex      // orders a filler's start with Close (layerpool_linux.go)
	layersMaking   sync.WaitGroup  // Close waits for it: a layer being made
	mounts         *preparedMounts // a mount namespace made ahead of a call (mntns_linux.go); nil: none
	mountsMu       sync.Mutex
	mountsFilling  bool           // one is being made (under mountsMu)
	mountsSkip     int            // calls left that prepare none (mntns_linux.go: mountsBackoff)
	mountsMaking   sync.WaitGroup // Close waits for it: a namespace being made, or one no call took being dropped
	unprepared     bool           // tests and benchmarks: calls make their own mount namespace
	testReadFiles  []string       // tests: read paths every call's setup looks up (stuck_linux_test.go)
	sslConf        []string       // OpenSSL's configuration file, read by every call (openssl_linux.go)
	mountTable     mountTable     // serve's mount table, for mountListLocal (mounttable_linux.go)
	egress         *egress        // nil: the policy lists no hosts (egress_linux.go)
	closed         atomic.Bool

	protect     []protPat       // the effective protect list
	protectList []string        // the same, as written (each commit's rules start from it: built once)
	globalHooks []string        // core.hooksPath values of the host's system and global git config
	home        string          // the server user's home, for "~/" in git config
	protNames   map[string]bool // literal protect names matched at any depth
	protMu      sync.Mutex
	homeLinks   *homelinks.Cache  // links from a home into the workspace: protected (atk40 F6)
	protBase    map[string]string // the workspace's top-level protected roots, cached under protBaseKey
	protBaseKey string
}

type pinned struct {
	policy.Command
	exec     []string // files the command may execute: itself and its ELF interpreter
	readDirs []string // its install prefix (e.g. a pyenv version dir), narrowed by runtimeDirs
	// argv0 is what the command is started as: its name, or for a venv's python the link's path
	// (policy.VenvOf), with the venv's pyvenv.cfg in readFiles.
	argv0     string
	readFiles []string
	denyRe    []denyPattern
	model     *optModel // how the binary parses its options; nil = judged conservatively
	// interpreter: it runs code it is given (policy.IsInterpreter), so what it writes is not
	// in its arguments.
	interpreter bool

	mu    sync.Mutex
	key   fileKey // identity of the file last hashed
	hash  string
	match bool
	// matched: the file matched its pin at some hash since serve started. A refusal says "changed
	// since it was pinned" only then; a pin that never matched (another file's hash pasted in) is
	// "does not match" (trial36 F7).
	matched bool
}

type fileKey struct {
	dev, ino             uint64
	size                 int64
	mtimeNsec, ctimeNsec int64
}

// New checks the policy against this host and probes which isolation layers work here.
func New(p *policy.Policy, o Options) (*Executor, error) {
	if p.Scheme != alsec.Name {
		return nil, fmt.Errorf("allowlist executor given a %q policy", p.Scheme)
	}
	e := &Executor{pol: p, al: alsec.Of(p), netKey: netKey(o), helper: o.HelperPath, log: o.Logger, cmds: map[string]*pinned{}, viaHelper: o.viaHelper, noMountNS: o.noMountNS, noLayer: o.noLayer}
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
	if p.File != "" {
		if err := policy.CheckFileSafe(p.File); err != nil {
			return nil, fmt.Errorf("refusing to serve: %w", err)
		}
	}
	ws, err := filepath.EvalSymlinks(alsec.Of(p).Workspace)
	if err != nil {
		return nil, workspaceMissing(p, err)
	}
	st, err := os.Stat(ws)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("workspace %s is not a directory (fix allowlist.workspace)", ws)
	}
	e.home, _ = os.UserHomeDir()
	if err := checkWorkspace(alsec.Of(p).Workspace, ws); err != nil {
		return nil, err
	}
	e.ws = ws
	e.sslConf = opensslConfigFiles()
	name := o.WorkspaceName
	if name == "" {
		name = "allowlist workspace"
	}
	e.log.Info(name, "configured", alsec.Of(p).Workspace, "resolved", ws)
	e.warnReadPaths(alsec.Of(p).ReadPaths)
	e.protectList = alsec.Of(p).Protected()
	if e.protect, err = compileProtect(e.protectList); err != nil {
		return nil, fmt.Errorf("allowlist.protect: %w", err)
	}
	e.protNames = protNames(e.protect)
	e.globalHooks = globalGitHooks(e.home)
	if err := e.chooseUser(st); err != nil {
		return nil, err
	}
	pcs, err := pinAll(alsec.Of(p).Commands)
	if err != nil {
		return nil, err
	}
	for _, pc := range pcs {
		e.cmds[pc.Name] = pc
		e.names = append(e.names, pc.Name)
	}
	if e.egress, err = newEgress(p, o); err != nil {
		return nil, err
	}
	e.warm = make(chan *helperProc, 1)
	e.netns = make(chan *callNS, netnsReady)
	e.layers = make(chan preparedLayer, 1)
	e.probed = make(chan struct{})
	e.begin = make(chan struct{})
	if !o.DeferProbe {
		e.Begin()
	}
	if o.Lazy {
		e.lazy = true // server_linux.go: the first StartServer tries the strongest layers before any probe
		return e, nil
	}
	pins := make([]*pinned, 0, len(e.names))
	for _, n := range e.names {
		pins = append(pins, e.cmds[n])
	}
	go func() {
		<-e.begin
		if !o.ServerOnly {
			go e.checkPins(pins)
		}
		e.probeErr = e.probeLayers()
		if e.probeErr == nil && !o.ServerOnly {
			e.probeWorkspaceLayer()
		}
		close(e.probed)
		if e.probeErr == nil && !e.directOK() { // a direct start needs no warm helper
			e.refill(int(p.Limits.MaxOutputBytes))
		}
		if e.probeErr == nil && e.directOK() && e.attr.has(unix.CLONE_NEWNET) {
			e.prepareNetNS()
		}
		e.prepareLayer()
	}()
	return e, nil
}

// Ready waits for the layer probe and reports whether commands can run on this host. serve
// stops with this error when it is not nil; calls wait for it.
func (e *Executor) Ready() error {
	e.Begin()
	<-e.probed
	return e.probeErr
}

// Begin lets a deferred layer probe start (Options.DeferProbe); it is a no-op once started.
func (e *Executor) Begin() { e.beginOnce.Do(func() { close(e.begin) }) }

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
// pinAll pins the commands and refuses an interpreter under another name, as one loop in policy
// order would, and reports the same first failure; the pins and the interpreter index (its
// stats) run side by side, on the way to serve's first answer.
func pinAll(cs []policy.Command) ([]*pinned, error) {
	type result struct {
		pc  *pinned
		err error
	}
	interp := make(chan *interpreterIndex, 1)
	go func() { interp <- knownInterpreters() }()
	rs := make([]chan result, len(cs))
	for i, c := range cs {
		rs[i] = make(chan result, 1)
		go func() {
			pc, err := pin(c)
			rs[i] <- result{pc, err}
		}()
	}
	ix := <-interp
	out := make([]*pinned, 0, len(cs))
	var first error
	for i, c := range cs {
		r := <-rs[i] // every pin is waited for, even after a failure: none outlives New
		if first != nil {
			continue
		}
		if first = r.err; first == nil {
			first = ix.check(r.pc)
		}
		if first == nil {
			r.pc.interpreter = policy.IsInterpreter(c.Name) || policy.IsInterpreter(filepath.Base(r.pc.exec[0]))
			out = append(out, r.pc)
		}
	}
	return out, first
}

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
	pc := &pinned{Command: c, exec: []string{real}, model: models[filepath.Base(real)]}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("allowlisted command %q: %s is not a regular file (fix its path, or re-run mcpsandbox init)", c.Name, real)
	}
	f, err := elf.Open(real)
	if err != nil {
		what := fmt.Sprintf("is not an ELF binary (%v)", err)
		if b, rerr := os.ReadFile(real); rerr == nil && bytes.HasPrefix(b, []byte("#!")) {
			what = "is a script (it starts with #!), not an ELF binary"
		}
		return nil, fmt.Errorf("allowlisted command %q: %s %s; a script cannot be pinned safely — allowlist its interpreter's real binary instead", c.Name, real, what)
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
	// The install prefix (bin/..) holds what the binary loads at run time (e.g. a Python
	// stdlib); never a home or a credentials dir.
	home, _ := os.UserHomeDir()
	pc.readDirs = append(pc.readDirs, runtimeDirs(real, home)...)
	pc.argv0 = c.Name
	if venv := policy.VenvOf(c.Path); venv != "" && !mutated("venv-argv0") {
		// Started by its path in the venv (a link, or a copy: `venv --copies`), Python reads
		// pyvenv.cfg beside its bin dir and takes the venv's packages; the venv's own dirs are
		// read as an install prefix is (narrowed the same way in a home's dot directory), its
		// pyvenv.cfg always.
		pc.argv0 = c.Path
		// The prefix judged is where the venv's dir leads: judged by its name, a venv dir that
		// is a link to a home (or a home's dot dir) would pass for an install and open it whole.
		rv, err := filepath.EvalSymlinks(venv)
		if mutated("venv-prefix-resolved") {
			rv, err = venv, nil
		}
		if err == nil {
			pc.readDirs = append(pc.readDirs, runtimeDirs(filepath.Join(rv, "bin", filepath.Base(c.Path)), home)...)
		}
		pc.readFiles = append(pc.readFiles, filepath.Join(venv, "pyvenv.cfg"))
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
	return checkReplaceable(path, "the binary", "move the binary to a root-owned location")
}

// warnReadPaths logs, at start, the read paths another local user can fill and the ones that
// open a host kernel view (verify's MS112 and MS115 say the same).
func (e *Executor) warnReadPaths(rs []string) {
	for i, r := range rs {
		if risk := ReadPathRisk(r); risk != "" {
			e.log.Warn(fmt.Sprintf("allowlist.read_paths[%d]: %s; commands would read what they put there (%s)", i, risk, ReadPathRiskFix))
		}
		if v := KernelView(r); v != "" {
			e.log.Warn(fmt.Sprintf("allowlist.read_paths[%d]: %s (%s; verify's MS115)", i, KernelViewFinding(r, v), KernelViewFix))
		}
	}
}

// ReadPathRiskFix is what to do about a ReadPathRisk.
const ReadPathRiskFix = "name a path only root or serve's user can write, or create it there first"

// ReadPathRisk says how a local user other than root or serve's user could put something of their
// choosing at read path p ("": nobody can). A missing path in a directory others may write can be
// made by them, a link to what they choose (a sticky /tmp included: anyone may create a new name
// there); an existing one must pass CheckOwnership's walk. serve, as root, binds and opens what the
// path leads to for the commands (attack round atk23).
func ReadPathRisk(p string) string { return readPathRisk(filepath.Clean(p), 0) }

// readPathRisk is ReadPathRisk of p, hops links into its resolution.
func readPathRisk(p string, hops int) string {
	q := p
	for {
		if _, err := os.Lstat(q); err == nil || q == "/" {
			break
		}
		q = filepath.Dir(q)
	}
	if q != p {
		// who may create a name in q, where q leads (a sticky directory too: anyone may)
		r, err := filepath.EvalSymlinks(q)
		if err != nil {
			return ""
		}
		st, err := os.Lstat(r)
		if err != nil {
			return ""
		}
		sys := st.Sys().(*syscall.Stat_t)
		me := uint32(os.Geteuid())
		w, err := writable.ByOthers(r, st, me)
		switch {
		case err != nil:
			return fmt.Sprintf("%s does not exist, and who may create it in %s is unknown: %v", p, q, err)
		case w != nil && w.Kind == writable.Everyone && w.Entry == "":
			return fmt.Sprintf("%s does not exist, and %s is writable by every local user: anyone can create it, a link to what they choose", p, q)
		case w != nil:
			return fmt.Sprintf("%s does not exist, and %s is %s: they can create it (%s)", p, q, w.Who(), w.Fix)
		case sys.Uid != 0 && sys.Uid != me:
			return fmt.Sprintf("%s does not exist, and %s is owned by uid %d, who can create it", p, q, sys.Uid)
		}
	}
	if err := checkReplaceable(q, "what commands read there", "name a path only root or serve's user can write"); err != nil {
		return err.Error()
	}
	if mutated("read-path-links-unfollowed") {
		return ""
	}
	// A link on the way is judged where it leads, as the kernel will follow it: a root-owned
	// link to a missing name in /tmp, or into another user's directory, passed as the link
	// alone (atk35b F7). As the kernel, at most 40 links.
	if hops >= 40 {
		return fmt.Sprintf("%s: more than 40 links to follow", p)
	}
	var pres []string // p's names from the root down: the first link the kernel meets first
	for pre := p; pre != "/" && pre != "."; pre = filepath.Dir(pre) {
		pres = append(pres, pre)
	}
	slices.Reverse(pres)
	for _, pre := range pres {
		st, err := os.Lstat(pre)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			continue
		}
		t, err := os.Readlink(pre)
		if err != nil {
			return fmt.Sprintf("%s: the link %s cannot be read: %v", p, pre, err)
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(pre), t)
		}
		rest, _ := filepath.Rel(pre, p)
		if r := readPathRisk(filepath.Join(t, rest), hops+1); r != "" {
			return fmt.Sprintf("%s leads through the link %s to where %s", p, pre, r)
		}
		return ""
	}
	return ""
}

// checkReplaceable is CheckOwnership's walk; what names what could be replaced, fix the way out.
func checkReplaceable(path, what, fix string) error {
	me := uint32(os.Geteuid())
	for p := path; ; p = filepath.Dir(p) {
		st, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("check %s: %w", p, err)
		}
		sys := st.Sys().(*syscall.Stat_t)
		if sys.Uid != 0 && sys.Uid != me {
			return fmt.Errorf("%s is owned by uid %d, who could replace %s (%s)", p, sys.Uid, what, fix)
		}
		mode := st.Mode()
		if sticky := mode&os.ModeSticky != 0 && mode.IsDir() && p != path; !sticky {
			w, err := writable.ByOthers(p, st, me)
			switch {
			case err != nil:
				return fmt.Errorf("check %s: %w", p, err)
			case w != nil && w.Kind == writable.Everyone && w.Entry == "":
				return fmt.Errorf("%s is world-writable, so anyone could replace %s (chmod o-w %s)", p, what, p)
			case w != nil:
				return fmt.Errorf("%s is %s, who could replace %s (%s)", p, w.Who(), what, w.Fix)
			}
		}
		if p == "/" {
			return nil
		}
	}
}

// Tools implements executor.Executor.
func (e *Executor) Tools() []executor.Tool {
	names := slices.Clone(e.names)
	desc := fmt.Sprintf("Run one allowlisted program (%s) with arguments, in the workspace directory. "+
		"No shell: arguments are passed literally (no globbing, pipes or redirection). Paths must stay inside the workspace.",
		strings.Join(names, ", "))
	return append([]executor.Tool{{
		Name:        "run_allowed_command",
		Title:       "Run an allowlisted command",
		Description: desc,
		InputSchema: executor.InputSchema[callArgs](func(s *jsonschema.Schema) {
			for _, n := range names {
				s.Properties["command"].Enum = append(s.Properties["command"].Enum, n)
			}
			s.Properties["args"].MaxItems = jsonschema.Ptr(maxArgs)
		}),
		Annotations: &mcp.ToolAnnotations{
			Title:           "Run an allowlisted command",
			ReadOnlyHint:    false, // commands may write inside the workspace
			DestructiveHint: nil,   // default true: a command may overwrite workspace files
			IdempotentHint:  false,
			OpenWorldHint:   e.openWorld(),
		},
		Run: e.run,
	}}, e.fileTools()...)
}

// Close implements executor.Executor: the warm helper is stopped.
func (e *Executor) Close() error {
	e.closed.Store(true)
	e.after.drain()
	e.closeNetNS()
	e.waitLayers()
	e.closeLayers()
	e.closeMounts()
	e.mountTable.close()
	wslayer.WaitRemoved()
	e.warmMu.Lock()
	e.warmMu.Unlock() //lint:ignore SA2001 a barrier: a refill that saw closed unset has registered
	e.warmMaking.Wait()
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
	Command string   `json:"command" jsonschema:"which allowlisted program to run"`
	Args    []string `json:"args,omitempty" jsonschema:"arguments, passed literally; relative paths are relative to the workspace"`
}

func (e *Executor) run(ctx context.Context, c executor.Call) (*executor.Result, error) {
	var a callArgs
	if err := executor.DecodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	if a.Command == "" && !mutated("allowlist-command-missing-unsaid") {
		// named as the other tools name a missing argument (trial46 F2: it read `"" is not allowlisted`)
		return nil, executor.Refuse("tool.arguments", "command is required: name one of %s", strings.Join(e.names, ", "))
	}
	pc, ok := e.cmds[a.Command]
	if !ok {
		return nil, executor.Refuse("allowlist.commands", "%q is not allowlisted (allowed: %s)", a.Command, strings.Join(e.names, ", "))
	}
	chk, err := e.checkArgs(pc, a.Args)
	if err != nil {
		return nil, err
	}
	if err := e.Ready(); err != nil {
		return nil, err
	}
	if pc.interpreter && e.attr.has(unix.CLONE_NEWNS) && !mutated("nested-protect") {
		// What an interpreter writes is not in its arguments: protected paths below the top
		// level are mounted read-only for its call too.
		more, linked, err := e.nestedProtected()
		if err != nil {
			return nil, err
		}
		chk.roBinds = append(chk.roBinds, more...)
		chk.hidden = linked
	}
	bin, err := pc.open()
	if err != nil {
		return nil, err
	}
	defer bin.Close()
	res, err := e.inLayer(ctx, c, chk, func(ctx context.Context) (*executor.Result, error) {
		return e.spawn(ctx, c, pc, bin, a.Args, chk, false)
	})
	if err == nil && res != nil && !mutated("allowlist-failure-note-none") {
		// the program's own words never name the policy's limit or rule (failnote.go)
		addNotes(res, FailureNotes(res.Stderr, res.ExitCode, e.pol.Limits.Memory))
	}
	if err == nil && res != nil && res.ExitCode != 0 && strings.Contains(strings.ToLower(res.Stderr), "permission denied") &&
		!mutated("allowlist-unwritable-note-none") {
		// a command's own write refused by the workspace's owner or mode said nothing to do
		// (trial48 F2's rest): the fix serve's log, --check and write_file give
		if why, fix := e.WorkspaceUnwritable(); why != "" && fix != "" {
			addNotes(res, []string{why + "; to let them: " + fix})
		}
	}
	return res, err
}

// addNotes ends the result's stderr with serve's notes, marked as serve's.
func addNotes(res *executor.Result, notes []string) {
	for _, n := range notes {
		if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
			res.Stderr += "\n"
		}
		res.Stderr += "[mcpsandbox: " + n + "]\n"
	}
}

// open opens the binary and checks its sha256 on the open file, which is the file that will be
// exec'd (by descriptor), so nothing can be swapped in between. Hashes are cached by file identity.
func (p *pinned) open() (*os.File, error) {
	// The path the command resolved to when serve started, not a link put in its place since
	// (O_NOFOLLOW), and never waiting on a FIFO put there (O_NONBLOCK; regular files only).
	real := p.exec[0]
	f, err := os.OpenFile(real, os.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, executor.Refuse("allowlist.commands["+p.Name+"].path",
				"%s was replaced by a symbolic link since serve started; if the change is legitimate, pin the file it leads to (its path and sha256 in the policy, or mcpsandbox init again) and restart serve", real)
		}
		return nil, fmt.Errorf("open pinned binary %s: %w", real, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("stat pinned binary %s: %w", real, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, executor.Refuse("allowlist.commands["+p.Name+"].path", "%s is no longer a regular file; restore the binary, or pin another (its path and sha256 in the policy, or mcpsandbox init again) and restart serve", real)
	}
	key := mutateKey(fileKey{st.Dev, st.Ino, st.Size, st.Mtim.Nano(), st.Ctim.Nano()})
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
		p.matched = p.matched || p.match
	}
	if !p.match && !mutated("sha256") {
		f.Close()
		if !p.matched && !mutated("pin-mismatch-says-changed") {
			return nil, executor.Refuse("allowlist.commands["+p.Name+"].sha256",
				"%s does not match its pinned sha256 (sha256 %.16s…, pinned %.16s…): the pin is another file's, or the file changed before serve started; pin it: its sha256 in the policy set to what `sha256sum %s` prints (mcpsandbox verify says the same), then restart serve", p.Path, p.hash, p.SHA256, p.Path)
		}
		return nil, executor.Refuse("allowlist.commands["+p.Name+"].sha256",
			"%s changed since it was pinned (sha256 now %.16s…, pinned %.16s…); if the change is legitimate (an upgrade), pin it again: its sha256 in the policy set to what `sha256sum %s` prints (mcpsandbox verify says the same), then restart serve", p.Path, p.hash, p.SHA256, p.Path)
	}
	return f, nil
}

// checkPins hashes every pinned command once, after the first answers (Begin: off serve's start
// path, docs/perf-allowlist.md), and warns for each that every call of it will be refused: a
// wrong sha256 otherwise started quietly, showed "Connected" in the client and failed each call
// (trial36 F7). The hash is cached, so the first call does not hash again.
func (e *Executor) checkPins(pins []*pinned) {
	if mutated("pin-mismatch-quiet-start") {
		return
	}
	for _, pc := range pins {
		f, err := pc.open()
		if err != nil {
			e.log.Warn(fmt.Sprintf("every call of %s will be refused: %v", pc.Name, err))
			continue
		}
		f.Close()
	}
}

// helperProc is a started helper waiting for its spec.
type helperProc struct {
	cmd            *exec.Cmd
	ctl            *os.File // server end of the spec socket
	stdout, stderr *executor.CapBuffer
	// mntNS holds the helper's mount namespace: when the call's last process exits, the kernel
	// would tear the namespace down (unmounting the private /tmp, waiting out RCU grace periods)
	// in the exit path, before the parent's wait returns. Holding a reference moves that work to
	// the close of this descriptor, done off the call's path.
	mntNS *os.File
}

// release drops the hold on the mount namespace in the background.
func (h *helperProc) release() {
	if h.mntNS != nil {
		go h.mntNS.Close()
		h.mntNS = nil
	}
}

// startHelper starts a helper in its namespaces; it blocks until handed a spec.
func (e *Executor) startHelper(maxOutput int) (*helperProc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("spec socket: %w", err)
	}
	ctl, child := os.NewFile(uintptr(fds[0]), "spec-ctl"), os.NewFile(uintptr(fds[1]), "spec")
	defer child.Close()
	h := &helperProc{ctl: ctl, stdout: &executor.CapBuffer{Limit: maxOutput}, stderr: &executor.CapBuffer{Limit: maxOutput}}
	cmd := exec.Command(e.helper, helper.Arg)
	// The helper needs nothing, and must not carry the server's secrets. One P: the helper runs
	// one thread of work, and fewer runtime threads start (and die at the exec) faster.
	cmd.Env = append([]string{"GOMAXPROCS=1"}, mutant.HelperEnv()...)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = h.stdout, h.stderr
	cmd.ExtraFiles = []*os.File{child}
	cmd.SysProcAttr = e.attr.sysProcAttr()
	e.egress.procAttr(e.attr, cmd.SysProcAttr)
	cmd.WaitDelay = 250 * time.Millisecond // a descendant holding stdout open must not hang the call
	if err := cmd.Start(); err != nil {
		ctl.Close()
		return nil, fmt.Errorf("start exec helper %s: %w", e.helper, err)
	}
	h.cmd = cmd
	if e.attr.has(unix.CLONE_NEWNS) {
		h.mntNS, _ = os.Open(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid))
	}
	return h, nil
}

// kill ends the helper's whole tree: it is PID 1 of its namespace (when namespaces work), and
// the group kill covers hosts without a PID namespace.
func (h *helperProc) kill() {
	groupKill(h.cmd.Process.Pid)
	_ = h.cmd.Process.Kill()
}

// helperFor takes the warm helper if there is one, else starts one now. The caller starts the
// replacement (refill) once its call's command is done: a helper's start (a new Go process in
// new namespaces) made beside the call took the CPU the call needed, and a serve that is not
// root cannot start it at a low priority.
func (e *Executor) helperFor(maxOutput int) (*helperProc, error) {
	select {
	case h := <-e.warm:
		return h, nil
	default:
		return e.startHelper(maxOutput)
	}
}

// helperStartedHook, when a test sets it, runs after a warm helper is started and before it
// is put in the slot.
var helperStartedHook atomic.Pointer[func(*Executor)]

func (e *Executor) refill(maxOutput int) {
	// Counted under the lock Close takes after setting closed: a refill that saw closed unset
	// has registered by the time Close waits, and Close discards what it made (a helper started
	// as serve closed, put in the slot after Close emptied it, waited there for good).
	e.warmMu.Lock()
	if e.closed.Load() {
		e.warmMu.Unlock()
		return
	}
	if !mutated("helper-refill-untracked") {
		e.warmMaking.Add(1)
		defer e.warmMaking.Done()
	}
	e.warmMu.Unlock()
	h, err := e.startIdle(maxOutput)
	if hook := helperStartedHook.Load(); hook != nil {
		(*hook)(e)
	}
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

// startIdle starts a warm helper at the lowest CPU priority, so that its start-up (the Go
// runtime's) yields to the call running now; the helper takes its priority back the moment a
// call is handed to it (it is root until it drops its uid). A process inherits the priority of
// the thread that starts it, so this thread's is lowered for the start and restored after.
// The thread must live on: the helper's parent-death signal fires when the thread that started
// it exits. Only as root (the only case where the helper and this thread can raise it back).
func (e *Executor) startIdle(maxOutput int) (*helperProc, error) {
	if !e.dropUID {
		return e.startHelper(maxOutput)
	}
	runtime.LockOSThread()
	tid := unix.Gettid()
	prio, err := unix.Getpriority(unix.PRIO_PROCESS, tid) // the kernel's 20 - nice
	if err != nil || unix.Setpriority(unix.PRIO_PROCESS, tid, 19) != nil {
		runtime.UnlockOSThread()
		return e.startHelper(maxOutput)
	}
	h, err := e.startHelper(maxOutput)
	if rerr := unix.Setpriority(unix.PRIO_PROCESS, tid, 20-prio); rerr != nil {
		// This thread stays slow: it ends with this goroutine (still locked), which ends the
		// helper it started too (parent-death signal); the next call starts its own.
		if h != nil {
			h.discard()
		}
		return nil, fmt.Errorf("restore the priority of serve's thread after starting a warm helper: %w", rerr)
	}
	runtime.UnlockOSThread()
	return h, err
}

func (h *helperProc) discard() {
	h.ctl.Close()
	h.kill()
	_ = h.cmd.Wait()
	h.release()
}

// spawn hands a helper the spec and the binary, and collects the result. chk is what the
// argument check found (nil for the probe).
func (e *Executor) spawn(ctx context.Context, c executor.Call, pc *pinned, bin *os.File, args []string, chk *checked, probe bool) (*executor.Result, error) {
	if err := e.heldRefusal(); err != nil && !probe {
		return nil, err
	}
	spec := e.spec(pc, c, args, probe)
	e.withChecked(&spec, chk, probe)
	if !spec.Mounts && !probe {
		// No mount namespace here: a per-call directory only this call's Landlock rules allow
		// stands in for /tmp, removed when the call ends.
		tmp, err := os.MkdirTemp("", "mcpsandbox-tmp-")
		if err != nil {
			return nil, fmt.Errorf("create the call's temporary directory: %w", err)
		}
		defer os.RemoveAll(tmp)
		if e.dropUID {
			_ = os.Chown(tmp, e.uid, e.gid)
		}
		spec.RWDirs = append(spec.RWDirs, tmp)
		spec.Env = append([]string{"TMPDIR=" + tmp}, spec.Env...)
	}
	if !probe && e.directOK() {
		res, err := e.spawnDirect(ctx, c, pc, bin, spec, chk)
		if !errors.Is(err, errSetupNotLocal) && !errors.Is(err, errUserNSDirect) {
			return res, err
		}
	}
	h, err := e.helperFor(c.MaxOutput)
	if err != nil {
		return nil, err
	}
	ec := e.egress.call(c.Session) // the call's way out to the egress proxy, if the policy lists hosts
	defer ec.close()
	start := time.Now()
	sent := make(chan error, 1)
	report := make(chan []byte, 1)
	go func() { // a goroutine: a spec larger than the socket buffer must not block the timeout
		err := unix.Sendmsg(int(h.ctl.Fd()), []byte{0}, unix.UnixRights(int(bin.Fd())), nil, 0)
		if err == nil {
			err = json.NewEncoder(h.ctl).Encode(spec)
		}
		_ = unix.Shutdown(int(h.ctl.Fd()), unix.SHUT_WR)
		sent <- err
		// The helper's end closes on exec (close-on-exec) or exit; anything before that is
		// the helper's own failure, never the command's output.
		msg := ec.report(h.ctl) // with egress, the helper's listener comes first
		h.ctl.Close()
		report <- msg
	}()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	stuck, held, werr := e.waitHelper(ctx, h, done, report)
	groupKill(h.cmd.Process.Pid) // sweep anything left in the process group
	h.release()
	if !probe && len(e.warm) == 0 {
		// The next call's helper, started now that this call's command is done (helperFor). A
		// root serve's calls routed here (their setup is on a network or FUSE mount) get one
		// too.
		go e.refill(c.MaxOutput)
	}
	if stuck {
		// Not waiting for the hand-over's goroutine: a helper the kernel holds may never read.
		return nil, fmt.Errorf("%s could not start: the sandbox's setup did not finish within %s and was stopped (a path it looks up may be on a file system that does not answer, a network or FUSE mount say)",
			pc.Name, time.Since(start).Round(time.Millisecond))
	}
	if held {
		// Its output is still being copied by a process that has not ended: not read here.
		return nil, heldError(pc.Name)
	}
	if err := <-sent; err != nil && werr == nil {
		return nil, fmt.Errorf("hand the call to the exec helper: %w", err)
	}
	if msg := <-report; len(msg) > 0 {
		return nil, helperFailure(pc.Name, string(msg))
	}
	res := &executor.Result{
		Stdout: h.stdout.String(), Stderr: h.stderr.String(),
		Truncated:  h.stdout.Dropped() > 0 || h.stderr.Dropped() > 0,
		TimedOut:   errors.Is(ctx.Err(), context.DeadlineExceeded),
		DurationMS: time.Since(start).Milliseconds(),
	}
	ec.note(res) // the proxy's refusals, which the program's own output may not name
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
	return res, nil
}

// helperSetupLimit bounds an exec helper's setup, from the hand-over to its exec, while it makes
// no progress (waitHelper: a helper that is runnable or using CPU at the deadline, as a warm one
// started at the lowest priority may be on a saturated machine, is given more). A variable for
// the test that shows a stuck setup stopped.
var helperSetupLimit = 5 * time.Second

// waitHelper waits for the helper of a call to end: it is killed when ctx ends, or when its
// setup (from the hand-over to its exec, when its end of the spec socket closes) has not finished
// within helperSetupLimit while making no progress (stuck; report then holds what it reported,
// empty). A setup that waits on a file system that does not answer would otherwise hold the call,
// and its slot, to the call's timeout; serve kills the helper from outside, which a deadline
// inside it could not do (it is its PID namespace's init: the kernel drops its own timer's
// SIGKILL). A helper that is runnable, or used CPU since the last look, is slow, not stuck (a
// loaded machine, atk24 F3), and is looked at again shortly; one found blocked with no CPU used
// at two looks in a row is stuck. held: it was killed and has not ended (reapWithin); the
// call must not wait for it nor read its output.
func (e *Executor) waitHelper(ctx context.Context, h *helperProc, done <-chan error, report chan []byte) (stuck, held bool, werr error) {
	pid := h.cmd.Process.Pid
	setup := time.NewTimer(helperSetupLimit)
	defer setup.Stop()
	deadline := setup.C
	if mutated("helper-setup-unbounded") {
		deadline = nil
	}
	execd, blockedLooks := false, 0
	_, ticks, _ := procProgress(pid)
	for {
		select {
		case werr = <-done:
			return false, false, werr
		case <-ctx.Done():
			state, _, ok := procProgress(pid)
			blocked := !execd && ok && state != 'R' // a runnable helper ran out of the call's time
			h.kill()
			werr, held = reapWithin(e, done)
			return blocked, held, werr
		case msg := <-report:
			report <- msg // the caller reads it too
			report, deadline, execd = nil, nil, true
		case <-deadline:
			// Stuck: not runnable and no CPU used, at two looks setupRecheck apart (one look
			// may catch a sound setup in a short wait: a mount, a page read from disk).
			state, now, ok := procProgress(pid)
			if !ok || state == 'R' || now != ticks {
				blockedLooks = 0
			} else {
				blockedLooks++
			}
			ticks = now
			// !ok: its /proc entry is gone, so it has ended (its end is on done: the deadline
			// won the select by chance) and was never stuck (CI 45b: a call whose wc had run
			// failed as a setup that did not finish).
			if (!ok || blockedLooks < 2) && !mutated("helper-setup-progress-ignored") {
				setup.Reset(setupRecheck)
				continue
			}
			h.kill()
			werr, held = reapWithin(e, done)
			return true, held, werr
		}
	}
}

// setupRecheck is how soon a helper found slow, not stuck, at its setup's deadline is looked at
// again.
const setupRecheck = 500 * time.Millisecond

// procProgress is pid's state (R runnable, S sleeping, D in an uninterruptible wait, ...) and
// the CPU time its threads have used, in clock ticks, from /proc/PID/stat.
func procProgress(pid int) (state byte, ticks uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')') // the command's name may hold spaces and parentheses
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 || len(f[0]) != 1 {
		return 0, 0, false
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return f[0][0], utime + stime, true
}

// killGrace is how long a call waits for its killed process to end before it leaves it to be
// reaped in the background (reapWithin). A variable for the test.
var killGrace = 2 * time.Second

// maxHeld bounds the killed processes of calls that have not ended (reapWithin): past it, calls
// are refused (heldRefusal) until one ends. A variable for the test.
var maxHeld int32 = 8

// reapWithin waits for a killed process's wait to return, at most killGrace. A process the
// kernel holds in an uninterruptible wait (a FUSE request its server has read and never answers;
// a hard NFS mount whose server is gone) does not die of SIGKILL until that wait ends, and its
// call must not wait with it, past its timeout and holding its slot (attack round atk24, F2): it
// is reaped in the background, and counted (held) until then.
func reapWithin[T any](e *Executor, done <-chan T) (T, bool) {
	if mutated("kill-waits-for-good") {
		return <-done, false
	}
	t := time.NewTimer(killGrace)
	defer t.Stop()
	select {
	case v := <-done:
		return v, false
	case <-t.C:
		e.held.Add(1)
		go func() {
			<-done
			e.held.Add(-1)
		}()
		var zero T
		return zero, true
	}
}

// heldError is the error of a call whose command was killed and has not ended.
func heldError(name string) error {
	return fmt.Errorf("%s was stopped, but the kernel holds its process in an uninterruptible wait (it reads or looks up a path on a file system that does not answer, a network or FUSE mount say): its output is lost, and it ends when that file system answers or is unmounted", name)
}

// heldRefusal refuses a call while too many calls' killed processes have not ended.
func (e *Executor) heldRefusal() error {
	if n := e.held.Load(); n >= maxHeld {
		return fmt.Errorf("refused: the processes of %d earlier calls were stopped but the kernel still holds them in uninterruptible waits (a file system that does not answer, a network or FUSE mount say); calls run again once they end (unmount or restore that file system)", n)
	}
	return nil
}

// helperFailure turns what the helper wrote on the spec socket into serve's error.
func helperFailure(name, msg string) error {
	if n, ok := strings.CutPrefix(msg, "exec failed: errno "); ok {
		errno, _ := strconv.Atoi(n)
		switch en := syscall.Errno(errno); en {
		case syscall.E2BIG:
			return fmt.Errorf("%s could not start: %v (the arguments and environment exceed the kernel's limit; write the data to a file in the workspace and pass its name)", name, en)
		case syscall.ETXTBSY:
			return fmt.Errorf("%s could not start: %v (its binary is open for writing, perhaps being upgraded; try again when that is done)", name, en)
		default:
			return fmt.Errorf("%s could not start: %v", name, en)
		}
	}
	return fmt.Errorf("%s (run `mcpsandbox serve --policy FILE --check` to see which layer fails on this host)", strings.TrimSpace(msg))
}

func (e *Executor) spec(pc *pinned, c executor.Call, args []string, probe bool) helper.Spec {
	env := []string{"PATH=" + FixedPATH}
	mounts := e.attr.has(unix.CLONE_NEWNS)
	if mounts {
		env = append(env, "TMPDIR=/tmp")
	}
	keys := make([]string, 0, len(e.al.Env))
	for k := range e.al.Env {
		if k != "TMPDIR" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+e.al.Env[k])
	}
	env = e.egress.withEnv(env)
	if mutated("env-scrub") {
		env = append(env, os.Environ()...)
	}
	lims := e.rlimits(c)
	readDirs := slices.Concat(systemReadDirs, pc.readDirs, e.al.ReadPaths)
	s := helper.Spec{
		Argv: append([]string{pc.argv0}, args...), Env: env, Dir: e.ws,
		DropUID: e.dropUID, UID: e.uid, GID: e.gid, Rlimits: lims, Nice: nice,
		NoNetwork: !e.al.AllHosts(),
		ReadDirs:  readDirs, ReadFiles: slices.Concat(systemReadFiles, e.sslConf, pc.readFiles, e.testReadFiles), ExecFiles: pc.exec, RWDirs: []string{e.ws}, DevFiles: devFiles,
		Probe: probe,
	}
	e.egress.apply(&s)
	if mounts {
		s.Mounts, s.TmpSize = true, e.tmpSize()
		s.RWDirs = append(s.RWDirs, "/tmp")
		s.ROBinds = e.protectedNow(e.layerRoot != "" || probe)
	}
	return s
}

// withChecked adds what the argument check found (chk, nil for the probe) to the call's spec:
// its read-only paths and its layer; without a layer, a link or missing one's directory (roParents).
func (e *Executor) withChecked(spec *helper.Spec, chk *checked, probe bool) {
	if chk != nil {
		spec.ROBinds = append(spec.ROBinds, chk.roBinds...)
		spec.Overlay = chk.overlay
	}
	if spec.Mounts && !probe && e.layerRoot == "" {
		spec.ROBinds = roParents(e.ws, spec.ROBinds)
	}
}

// rlimits are the call's resource limits.
func (e *Executor) rlimits(c executor.Call) []helper.Rlimit {
	cpuSec := uint64(math.Ceil(c.Timeout.Seconds())) + 1
	lims := []helper.Rlimit{
		{Resource: unix.RLIMIT_CPU, Value: cpuSec},
		{Resource: unix.RLIMIT_AS, Value: uint64(e.pol.Limits.Memory)},
		{Resource: unix.RLIMIT_FSIZE, Value: uint64(e.al.MaxFileSize)},
		{Resource: unix.RLIMIT_NOFILE, Value: 256},
		{Resource: unix.RLIMIT_CORE, Value: 0},
		{Resource: unix.RLIMIT_MEMLOCK, Value: 0},
	}
	if e.dropUID || e.attr.userNS {
		// RLIMIT_NPROC counts per uid: meaningful only for a uid the commands have to themselves.
		lims = append(lims, helper.Rlimit{Resource: unix.RLIMIT_NPROC, Value: uint64(e.pol.Limits.Pids)})
	}
	return mutateRlimits(lims)
}

// tmpSize caps the call's private /tmp: the memory limit, as a tmpfs lives in memory.
func (e *Executor) tmpSize() uint64 { return uint64(e.pol.Limits.Memory) }

// protectedNow lists the existing protected paths at the workspace's top level and what the
// workspace's git set-up makes the host run, resolved: the helper mounts them read-only. layered:
// the call's writes go through a layer and its commit (a link root is left to the commit).
func (e *Executor) protectedNow(layered bool) []string {
	p := e.protection()
	out := make([]string, 0, len(p.roots)+1)
	for r := range p.roots {
		if st, err := os.Lstat(r); layered && err == nil && st.Mode()&os.ModeSymlink != 0 {
			continue // a home's link met on the way (homelinks): a mount would follow it; the commit judges it
		}
		out = append(out, r)
	}
	if p.cut != "" && !layered {
		out = append(out, e.ws) // no layer to refuse at: the workspace read-only whole (atk40b F7)
	}
	slices.Sort(out)
	return out
}

// roParents is the read-only mounts of a call without a layer (atk41 F16): a protected path
// that is a link (a mount would follow it: ~/.bashrc -> ws/bashrc -> ws/shell/bashrc, the call
// replaces ws/bashrc) or is missing (a dangling ~/.profile -> ws/profile, the call makes it)
// cannot be mounted itself, and no commit judges the call's writes: the nearest directory above
// it that is one is mounted read-only whole instead (the workspace, for a top-level name).
// Paths outside the workspace are kept as they are (calls write only the workspace and /tmp).
func roParents(ws string, ps []string) []string {
	if mutated("allowlist-layerless-link-parent-ro") {
		return ps
	}
	seen := make(map[string]bool, len(ps))
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if within(ws, p) {
			if st, err := os.Lstat(p); err != nil || st.Mode()&os.ModeSymlink != 0 {
				d := filepath.Dir(p)
				for d != ws {
					if st, err := os.Lstat(d); err == nil && st.IsDir() {
						break
					}
					d = filepath.Dir(d)
				}
				p = d
			}
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// layerlessReadOnly says which directories a call without a layer gets read-only whole for a
// protected link or missing name (roParents), for the layer report; "" when none.
func (e *Executor) layerlessReadOnly() string {
	var says []string
	for _, r := range e.protectedNow(false) {
		if d := roParents(e.ws, []string{r}); d[0] != r {
			says = append(says, d[0]+" (for "+r+")")
		}
	}
	return strings.Join(says, ", ")
}

// Recovered hands serve the commits a dead serve left that this one finished (executor.Recoverer).
func (e *Executor) Recovered() []executor.Recovery { return e.recoveries.Take() }

// workspaceMissing is the error for a workspace that does not resolve: another user's, said as
// such (no mkdir makes it this user's, trial38 F1), else "create it".
func workspaceMissing(p *policy.Policy, err error) error {
	if fe := policy.ForeignError(p.File, p.ForeignPaths()); fe != nil {
		return fe
	}
	return fmt.Errorf("workspace %s: %w (create it: mkdir -p %s)", alsec.Of(p).Workspace, err, shellword.Quote(alsec.Of(p).Workspace))
}
