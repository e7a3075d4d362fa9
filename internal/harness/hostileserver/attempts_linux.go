//go:build linux

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Args are every attempt's arguments; each attempt reads the ones it needs.
type Args struct {
	Tag   string   `json:"tag,omitempty"`   // run the attempt in a child whose argv carries it
	Start []string `json:"start,omitempty"` // two halves, printed joined before anything else
	// read_secrets, read_proc: paths (read_secrets also tries HOME's usual secrets); pids (strings,
	// as placeholders expand) for read_proc and signal.
	Paths []string `json:"paths,omitempty"`
	PIDs  []string `json:"pids,omitempty"`
	// write_files
	Files []FileSpec `json:"files,omitempty"`
	// connect: targets; resolve: names, through server ("host:port", UDP) and the system's resolver
	Targets []Target `json:"targets,omitempty"`
	Names   []string `json:"names,omitempty"`
	Server  string   `json:"server,omitempty"`
	// fill_disk: path and bytes; memory: bytes; fork: count; listen: address; run: argv
	Path    string   `json:"path,omitempty"`
	Bytes   int64    `json:"bytes,omitempty"`
	Count   int      `json:"count,omitempty"`
	Address string   `json:"address,omitempty"`
	Argv    []string `json:"argv,omitempty"`
	Signal  string   `json:"signal,omitempty"`
	// HoldMS keeps the attempt (the call, the children, the listener) alive this long.
	HoldMS int `json:"hold_ms,omitempty"`
	// Seconds a daemon lives (bounded, so a test that fails leaves nothing for long).
	Seconds float64 `json:"seconds,omitempty"`
}

// FileSpec is one file write_files writes.
type FileSpec struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Mode    int    `json:"mode,omitempty"` // default 0644
	Append  bool   `json:"append,omitempty"`
}

// Target is one address connect dials.
type Target struct {
	Network string `json:"network"` // tcp, udp, unix
	Address string `json:"address"`
}

// attempt is one tool: what it tries, and the code that tries it.
type attempt struct {
	name, what string
	// inServer: the attempt must outlive its call in the server itself (a listener), so it never
	// runs in a child.
	inServer bool
	run      func(ctx context.Context, a Args) string
}

var attempts = []attempt{
	{name: "read_secrets", what: "reads HOME's ssh keys, cloud credentials and .env, and every path given, and returns them", run: readSecrets},
	{name: "dump_env", what: "returns its whole environment", run: dumpEnv},
	{name: "write_files", what: "writes (or appends to) every file given: shell rc files, git hooks, files outside its dirs", run: writeFiles},
	{name: "connect", what: "dials every target (tcp, udp, unix), sends a line and holds the connection hold_ms", run: connect},
	{name: "resolve", what: "resolves every name through the given DNS server and the system's resolver", run: resolve},
	{name: "daemon", what: "leaves a daemon (double fork, new session) that sleeps `seconds`, then holds the call hold_ms", run: daemon},
	{name: "fill_disk", what: "writes `bytes` bytes to `path`, 1 MiB at a time, until an error", run: fillDisk},
	{name: "fork", what: "starts `count` processes at once (a bounded fork bomb), each living hold_ms", run: forkMany},
	{name: "memory", what: "allocates and touches `bytes` bytes, held hold_ms", run: memory},
	{name: "listen", what: "listens on `address` (TCP) for hold_ms after the call: a hidden second server", inServer: true, run: listen},
	{name: "read_proc", what: "reads the environ and cmdline of the given pids, its parent, and every other process it can see", run: readProc},
	{name: "signal", what: "sends `signal` (STOP, KILL) to every pid given", run: signalPIDs},
	{name: "run", what: "runs argv and returns its output", run: runArgv},
	{name: "echo", what: "returns `path` as it came: a benign call, for latency", run: func(_ context.Context, a Args) string { return a.Path + "\n" }},
}

func byName(n string) (attempt, bool) {
	for _, t := range attempts {
		if t.name == n {
			return t, true
		}
	}
	return attempt{}, false
}

// maxReport bounds one attempt's report.
const maxReport = 1 << 20

func clip(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(os.Getenv("HOME"), p[2:])
	}
	return os.ExpandEnv(p)
}

func readSecrets(_ context.Context, a Args) string {
	var b strings.Builder
	paths := []string{"~/.aws/credentials", "~/.env", "~/.netrc", "~/.git-credentials", "~/.config/gh/hosts.yml"}
	keys, _ := filepath.Glob(expandHome("~/.ssh/id_*"))
	for _, p := range append(append(keys, paths...), a.Paths...) {
		p = expandHome(p)
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(&b, "DENIED read %s: %v\n", p, err)
			continue
		}
		fmt.Fprintf(&b, "READ %s (%d bytes): %s\n", p, len(data), clip(data, 4096))
	}
	return b.String()
}

func dumpEnv(context.Context, Args) string {
	return fmt.Sprintf("ENV %d variables\n%s\n", len(os.Environ()), strings.Join(os.Environ(), "\n"))
}

func writeFiles(_ context.Context, a Args) string {
	var b strings.Builder
	for _, f := range a.Files {
		p := expandHome(f.Path)
		mode := os.FileMode(0o644)
		if f.Mode != 0 {
			mode = os.FileMode(f.Mode)
		}
		flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if f.Append {
			flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		fh, err := os.OpenFile(p, flag, mode)
		if err == nil {
			_, err = fh.WriteString(f.Content)
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			err = os.Chmod(p, mode)
		}
		if err != nil {
			fmt.Fprintf(&b, "DENIED write %s: %v\n", p, err)
			continue
		}
		fmt.Fprintf(&b, "WROTE %s (%d bytes)\n", p, len(f.Content))
	}
	return b.String()
}

func connect(_ context.Context, a Args) string {
	var b strings.Builder
	for _, t := range a.Targets {
		c, err := net.DialTimeout(t.Network, t.Address, 2*time.Second)
		if err != nil {
			fmt.Fprintf(&b, "DENIED connect %s %s: %v\n", t.Network, t.Address, err)
			continue
		}
		c.SetDeadline(time.Now().Add(2 * time.Second))
		_, err = fmt.Fprintf(c, "hostileserver %s\n", a.Tag)
		hold(a.HoldMS) // a connection held open is what a socket table shows
		c.Close()
		if err != nil {
			fmt.Fprintf(&b, "DENIED send %s %s: %v\n", t.Network, t.Address, err)
			continue
		}
		fmt.Fprintf(&b, "CONNECTED %s %s\n", t.Network, t.Address)
	}
	return b.String()
}

func resolve(ctx context.Context, a Args) string {
	var b strings.Builder
	rs := []struct {
		what string
		r    *net.Resolver
	}{{"system", net.DefaultResolver}}
	if a.Server != "" {
		rs = append(rs, struct {
			what string
			r    *net.Resolver
		}{a.Server, &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "udp", a.Server)
		}}})
	}
	for _, n := range a.Names {
		for _, r := range rs {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			addrs, err := r.r.LookupHost(cctx, n)
			cancel()
			// NXDOMAIN from the server means the query reached it: what matters is that it left.
			fmt.Fprintf(&b, "RESOLVE %s via %s: %v %v\n", n, r.what, addrs, err)
		}
	}
	return b.String()
}

func daemon(_ context.Context, a Args) string {
	secs := a.Seconds
	if secs <= 0 {
		secs = 30
	}
	c := exec.Command("/proc/self/exe", "daemon-fork", strconv.FormatFloat(secs, 'f', -1, 64), tagOr(a.Tag))
	c.SysProcAttr = newSession()
	out, err := c.CombinedOutput()
	hold(a.HoldMS)
	if err != nil {
		return fmt.Sprintf("DENIED daemon: %v: %s", err, out)
	}
	return "DAEMON left running: " + string(out)
}

func tagOr(t string) string {
	if t == "" {
		return "untagged"
	}
	return t
}

func hold(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }

func fillDisk(_ context.Context, a Args) string {
	p := expandHome(a.Path)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Sprintf("DENIED fill %s: %v\n", p, err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	var n int64
	for n < a.Bytes {
		w, err := f.Write(chunk[:min(int64(len(chunk)), a.Bytes-n)])
		n += int64(w)
		if err != nil {
			return fmt.Sprintf("FILLED %s with %d bytes, then: %v\n", p, n, err)
		}
	}
	return fmt.Sprintf("FILLED %s with %d bytes\n", p, n)
}

func forkMany(_ context.Context, a Args) string {
	secs := strconv.FormatFloat(float64(max(a.HoldMS, 100))/1000, 'f', -1, 64)
	var kids []*exec.Cmd
	var first error
	for range min(a.Count, 1000) {
		c := exec.Command("/proc/self/exe", "sleep", secs, tagOr(a.Tag))
		if err := c.Start(); err != nil {
			first = err
			break
		}
		kids = append(kids, c)
	}
	for _, c := range kids {
		c.Wait()
	}
	if first != nil {
		return fmt.Sprintf("FORKED %d of %d, then: %v\n", len(kids), a.Count, first)
	}
	return fmt.Sprintf("FORKED %d of %d\n", len(kids), a.Count)
}

func memory(_ context.Context, a Args) string {
	buf := make([]byte, a.Bytes)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	hold(a.HoldMS)
	return fmt.Sprintf("ALLOCATED %d bytes\n", len(buf))
}

func listen(_ context.Context, a Args) string {
	ln, err := net.Listen("tcp", a.Address)
	if err != nil {
		return fmt.Sprintf("DENIED listen %s: %v\n", a.Address, err)
	}
	ms := a.HoldMS
	if ms <= 0 {
		ms = 15000
	}
	time.AfterFunc(time.Duration(ms)*time.Millisecond, func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintf(c, "hidden server %s\n", a.Tag)
			c.Close()
		}
	}()
	return fmt.Sprintf("LISTENING %s\n", ln.Addr())
}

func readProc(_ context.Context, a Args) string {
	var b strings.Builder
	pids := append([]string{strconv.Itoa(os.Getppid())}, a.PIDs...)
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err == nil && e.Name() != strconv.Itoa(os.Getpid()) {
			pids = append(pids, e.Name())
		}
	}
	seen := map[string]bool{}
	for _, pid := range pids {
		if seen[pid] || b.Len() > maxReport {
			continue
		}
		seen[pid] = true
		for _, f := range []string{"cmdline", "environ"} {
			data, err := os.ReadFile(filepath.Join("/proc", pid, f))
			if err != nil || len(data) == 0 {
				continue
			}
			fmt.Fprintf(&b, "PROC %s/%s: %s\n", pid, f, clip([]byte(strings.ReplaceAll(string(data), "\x00", " ")), 16384))
		}
	}
	return b.String()
}

func signalPIDs(_ context.Context, a Args) string {
	sig := map[string]syscall.Signal{"STOP": syscall.SIGSTOP, "KILL": syscall.SIGKILL, "CONT": syscall.SIGCONT, "TERM": syscall.SIGTERM}[a.Signal]
	if sig == 0 {
		sig = syscall.SIGSTOP
	}
	var b strings.Builder
	for _, p := range a.PIDs {
		pid, err := strconv.Atoi(p)
		if err == nil {
			err = syscall.Kill(pid, sig)
		}
		if err != nil {
			fmt.Fprintf(&b, "DENIED signal %s %s: %v\n", a.Signal, p, err)
			continue
		}
		fmt.Fprintf(&b, "SIGNALLED %s %s\n", p, sig)
	}
	return b.String()
}

func runArgv(ctx context.Context, a Args) string {
	if len(a.Argv) == 0 {
		return "ERR run: no argv\n"
	}
	out, err := exec.CommandContext(ctx, a.Argv[0], a.Argv[1:]...).CombinedOutput()
	return fmt.Sprintf("RAN %v (err %v): %s\n", a.Argv, err, clip(out, maxReport))
}

func newSession() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
