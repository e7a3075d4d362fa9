package sandbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	allowlist "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Grace is how long a server may take to exit after its client closed stdin; then its whole
// tree is killed.
const Grace = 2 * time.Second

// Run starts the policy's server under the layers and relays stdio until the client or the
// server goes; the server's whole tree is dead when it returns.
func Run(ctx context.Context, p *policy.Policy, o Options) error {
	o.defaults()
	t0 := time.Now()
	argv, err := CommandOf(p, o.Command)
	if err != nil {
		return err
	}
	if p.File != "" {
		if err := policy.CheckFileSafe(p.File); err != nil {
			return fmt.Errorf("refusing to wrap: %w", err)
		}
	}
	warnOtherSections(p, o.Logger)
	realHome, _ := os.UserHomeDir()
	prog, err := resolveProgram(argv, os.Getenv("PATH"), realHome, wrapsec.Of(p).Net().Mode == policy.NetNone)
	if err != nil {
		return err
	}
	reads, readFiles, err := splitReads(wrapsec.Of(p).Read)
	if err != nil {
		return err
	}
	if err := checkWrites(wrapsec.Of(p).Write); err != nil {
		return err
	}
	// a wrap.write directory the server's uid cannot write: said at the start, as serve says
	// an unwritable allowlist workspace (trial49 F4), not only by verify's MS505
	if why, fix := WriteDirsUnwritable(wrapsec.Of(p).Write); why != "" {
		o.Logger.Warn(why, "fix", fix)
	}
	auditPath, err := auditPathOf(p)
	if err != nil {
		return err
	}
	if err := checkOwnFiles(p, auditPath); err != nil {
		return err
	}
	al, err := audit.Open(auditPath, os.Environ())
	if err != nil {
		return err
	}
	defer al.Close()
	if note := al.ReserveNote(); note != "" {
		o.Logger.Warn(note)
	}
	home, err := makeHome()
	if err != nil {
		return fmt.Errorf("create the server's private HOME: %w", err)
	}
	defer os.RemoveAll(home)
	ex, err := newExecutor(p, home, prog.Binary, o, true, true)
	if err != nil {
		return err
	}
	defer ex.Close()
	ex.SetAudit(al)
	o.Logger.Debug("sandbox set up", "ms", time.Since(t0).Milliseconds())
	uid, gid := ex.UID()
	if os.Geteuid() == 0 {
		_ = os.Chown(home, uid, gid)
	}
	rw := append([]string{home}, wrapsec.Of(p).Write...)
	npmCache, release, err := useNPMCache(p, prog, uid, gid, func(note string) { o.Logger.Warn(note) })
	if err != nil {
		return err
	}
	defer release()
	if npmCache != "" {
		rw = append(rw, npmCache)
	}
	session := "wrap-" + strconv.Itoa(os.Getpid())
	serr, err := startStderrRelay(o.Stderr)
	if err != nil {
		return err
	}
	defer serr.wait(Grace) // after the server's Kill (deferred below, run first): its last words
	srv, err := ex.StartServer(allowlist.ServerOptions{
		Binary: prog.Binary, Argv: prog.Argv, Env: serverEnv(p, prog, home),
		PATH: strings.Join(append(prog.PathDirs, allowlist.FixedPATH), ":"), Dir: home,
		ReadDirs: append(prog.ReadDirs, reads...), ReadFiles: append(prog.ReadFiles, readFiles...), ExecDirs: prog.ExecDirs,
		RWDirs: rw, Session: session, Stderr: serverStderr(o, serr), DirQuota: uint64(p.Limits.WorkspaceQuota),
	})
	serr.started()
	if err != nil {
		return fmt.Errorf("start the wrapped server %q: %w", argv, err)
	}
	defer srv.Kill()
	o.Logger.Debug("server started", "ms", time.Since(t0).Milliseconds())
	o.Logger.Info("wrapping", "name", p.Name, "command", argv, "pid", srv.Pid, "policy_hash", p.Hash()[:16], "audit", al.Path())
	rl := newRelay(p, al, o, session, srv.Stdin)
	rl.stderrDenied = serr.seen.take
	err = rl.run(ctx, o.Stdin, srv)
	srv.Kill()
	serr.wait(Grace) // the server's last lines before wrap's error that points at them
	if errors.Is(err, errServerEnded) {
		err = fmt.Errorf("%w%s%s", err, FirstStartHint(argv[0], wrapsec.Of(p).Net(), p.File), endHint(&serr.seen, npmCache, wrapsec.Of(p).Net(), p.File))
	}
	return err
}

// warnOtherSections warns of each section of another scheme in the policy's file: an
// [allowlist] network list in a wrap policy was accepted without a word, and every host it
// named refused all the same (trial49 F2; verify's MS408 says the same).
func warnOtherSections(p *policy.Policy, log *slog.Logger) {
	if p.File == "" || mutated("wrap-other-sections-unsaid") {
		return
	}
	text, err := os.ReadFile(p.File)
	if err != nil {
		return
	}
	for _, s := range policy.OtherSections(text, p.Scheme) {
		what, fix := s.Says(p.Scheme)
		log.Warn(what, "fix", fix)
	}
}

// checkOwnFiles refuses a policy or an audit log the wrapped server could rewrite or read.
func checkOwnFiles(p *policy.Policy, auditPath string) error {
	// the wrapped server writes in wrap.write: a policy or audit log there is its to rewrite
	for _, d := range p.WriteDirs() {
		if mutated("wrap-own-files") {
			break
		}
		if err := policy.CheckOwnFilesIn(d, "the wrap.write directory", "the wrapped server writes", p.File, auditPath); err != nil {
			return fmt.Errorf("refusing to wrap: %w", err)
		}
	}
	if key, dirs := p.ReadDirs(); len(dirs) > 0 {
		if err := policy.CheckAuditNotReadIn(dirs, key, auditPath); err != nil {
			return fmt.Errorf("refusing to wrap: %w", err)
		}
	}
	return nil
}

// errServerEnded is the wrapped server's own end (not its client's, not the context's).
var errServerEnded = errors.New("the wrapped server ended")

func (o *Options) defaults() {
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(o.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
}

// serverStderr is the server's stderr: the relay's pipe (stderr.go), never wrap's own
// descriptor, which may be the user's terminal (atk36 F5).
func serverStderr(o Options, s *stderrRelay) *os.File {
	if mutated("wrap-stderr-passed") {
		if f, ok := o.Stderr.(*os.File); ok {
			return f
		}
	}
	return s.w
}

// newExecutor is the allowlist scheme's executor over the server's private HOME: the layers
// and the egress proxy of an allowlist policy with the wrap policy's limits and network.
func newExecutor(p *policy.Policy, home, binary string, o Options, lazy, serverOnly bool) (*allowlist.Executor, error) {
	ap := policy.Default(alsec.Name)
	ap.Name, ap.Limits, ap.Audit = p.Name, p.Limits, p.Audit
	alsec.Of(ap).Workspace = home
	// the executor probes its layers with its first command (never run): the server's program,
	// which it also checks is an ELF binary nobody but root or this user could replace
	alsec.Of(ap).Commands = []policy.Command{{Name: filepath.Base(binary), Path: binary, SHA256: strings.Repeat("0", 64)}}
	alsec.Of(ap).SetNet(wrapsec.Of(p).Net())
	if mutated("wrap-network") {
		alsec.Of(ap).SetNet(policy.Network{Mode: policy.NetAll})
	}
	ex, err := allowlist.New(ap, allowlist.Options{HelperPath: o.HelperPath, Logger: o.Logger, Lazy: lazy,
		WorkspaceName: "the wrapped server's private HOME", NetworkKey: "wrap.network", ServerOnly: serverOnly})
	if err != nil {
		return nil, fmt.Errorf("set up the sandbox: %w", err)
	}
	return ex, nil
}

// serverEnv is the server's whole environment besides PATH and TMPDIR: HOME (private), LANG,
// what its runtime needs, and the variables the policy names, from the client's environment.
func serverEnv(p *policy.Policy, prog *program, home string) []string {
	env := []string{"HOME=" + home, "LANG=C.UTF-8", "XDG_CONFIG_HOME=" + home + "/.config", "XDG_CACHE_HOME=" + home + "/.cache"}
	env = append(env, prog.Env...)
	if prog.Node && wrapsec.Of(p).Net().Mode == policy.NetHosts {
		env = append(env, "NODE_USE_ENV_PROXY=1") // node >= 24: fetch and http honour HTTP(S)_PROXY, the only way out
	}
	for _, k := range wrapsec.Of(p).Env {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if mutated("wrap-env") {
		env = append(env, os.Environ()...)
	}
	return env
}

// splitReads sorts [wrap].read into directories and files (Landlock treats them apart).
func splitReads(paths []string) (dirs, files []string, err error) {
	for _, p := range paths {
		st, err := os.Stat(p)
		switch {
		case err != nil:
			return nil, nil, fmt.Errorf("wrap.read: %w (create it, or remove it from the policy)", err)
		case st.IsDir():
			dirs = append(dirs, p)
		default:
			files = append(files, p)
		}
	}
	return dirs, files, nil
}

func checkWrites(paths []string) error {
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			return fmt.Errorf("wrap.write: %s is not a directory (create it: mkdir -p %s)", p, shellword.Quote(p))
		}
	}
	return nil
}

// auditPathOf is where the policy's audit log goes: audit.path, or the default.
func auditPathOf(p *policy.Policy) (string, error) {
	if p.Audit.Path != "" {
		return p.Audit.Path, nil
	}
	return audit.DefaultPath()
}

// unlayered ends a cancelled call's reason (atk39b F7): under wrap the server writes to the host
// directly, so a call left unanswered may still have done its work; "cancelled" alone reads as
// "did not happen".
const unlayered = "what it did for the call until then is on the host, not undone (wrap has no workspace layer: check its wrap.write directories)"

// run relays until the client's EOF (the server then gets Grace to exit), the server's end, or
// ctx's end; every way out kills the server's tree (the caller's deferred Kill).
func (r *relay) run(ctx context.Context, in io.Reader, srv *allowlist.Server) error {
	fromServer := make(chan error, 1)
	go func() { fromServer <- r.fromServer(srv.Stdout) }()
	fromClient := make(chan error, 1)
	go func() { fromClient <- r.fromClient(in) }()
	select {
	case err := <-fromClient:
		srv.Stdin.Close()
		how := "was stopped after " + Grace.String()
		select {
		case <-srv.Done():
			how = "exited on its own"
		case <-time.After(Grace):
		}
		srv.Kill()
		// the server's last answers may still be in its pipe when it exits: relay them (its
		// tree is dead, so the pipe ends) before wrap exits with them unsent
		select {
		case <-fromServer:
		case <-time.After(Grace):
		}
		r.finish("cancelled", "the client closed its end (it quit or died) before the server answered; the server "+how+
			": "+unlayered)
		if errors.Is(err, os.ErrClosed) {
			err = nil
		}
		return err
	case <-fromServer:
		select {
		case <-srv.Done():
		case <-time.After(Grace):
		}
		srv.Kill()
		r.finish("error", "the wrapped server ended before it answered")
		return fmt.Errorf("%w (%v): see its messages above on stderr", errServerEnded, srv.Err())
	case <-ctx.Done():
		srv.Kill()
		r.finish("cancelled", "wrap was stopped (a signal) before the server answered: "+unlayered)
		if mutated("wrap-signal-error") {
			return ctx.Err()
		}
		// stopped (SIGTERM from the client that started it, ^C): an orderly end, as serve's,
		// not an error ("mcpsandbox: context canceled" and exit 1 in the client's log)
		return nil
	}
}

// useNPMCache gives a node server its private npm cache (privateNPMCache): prog runs npx's
// bins from it and reads what its links lead to. "" for a server that is not node's.
func useNPMCache(p *policy.Policy, prog *program, uid, gid int, warn func(string)) (string, func(), error) {
	if !prog.Node || mutated("wrap-npm-cache") {
		return "", func() {}, nil
	}
	cache, release, err := privateNPMCache(p, prog.NPMFrom, uid, gid, warn)
	if err != nil {
		return "", nil, err
	}
	prog.ExecDirs = append(prog.ExecDirs, cache) // npx runs the package's bin from its cache
	if prog.NPMFrom != "" {
		prog.ReadDirs = append(prog.ReadDirs, NPMContent(prog.NPMFrom)) // what the cache's links lead to
	}
	prog.Env = append(prog.Env, "npm_config_cache="+cache)
	return cache, release, nil
}
