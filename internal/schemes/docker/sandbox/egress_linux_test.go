package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
)

// probeEnv hands the socket paths to TestEgressProbeHelper, run as another uid.
const probeEnv = "MCPSANDBOX_TEST_EGRESS_PROBE"

// Another local user cannot use a container's egress proxy: a process of uid 65534 on the
// host (not in any container) gets EACCES on every socket under the egress directories, while
// the container, whose uid is the same 65534, fetches a listed host through its own socket.
func TestEgressSocketOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: needs root, to run the probe as another uid")
	}
	tmp := publicTempDir(t)
	idx := newIndex(t)
	p := egressPolicy(t, fmt.Sprintf("pypi.test:%d", port(idx.http)))
	dksec.Of(p).Pool = 1
	e := newEgressExec(t, p)
	var socks []string
	for deadline := time.Now().Add(20 * time.Second); len(socks) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		socks, _ = egressSockets(t) // the pooled container's
	}
	if len(socks) == 0 {
		t.Fatal("no egress socket appeared for the pooled container")
	}
	r, err := callSession(t, e, "s", fmt.Sprintf(fetchProgram, port(idx.http), "/simple/demo/", port(idx.http)))
	if err != nil || !strings.HasPrefix(r.Stdout, "200") {
		t.Fatalf("the container's own fetch: %+v %v", r, err)
	}
	socks, _ = egressSockets(t) // the pooled replacement's now
	// the probe: this test binary, copied where uid 65534 may run it
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "probe.test")
	copyFile(t, self, bin)
	cmd := exec.Command(bin, "-test.run=^TestEgressProbeHelper$", "-test.v", "-test.count=1")
	cmd.Dir = tmp
	// TMPDIR: the probe's own test environment (internal/testenv) is made there, and this
	// test's TMPDIR is one uid 65534 may pass through but not write
	cmd.Env = append(os.Environ(), probeEnv+"="+strings.Join(socks, "\n"), "TMPDIR=/tmp")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe as uid 65534: %v\n%s", err, out)
	}
	t.Logf("probe as uid 65534:\n%s", out)
	lines := 0
	for _, l := range strings.Split(string(out), "\n") {
		path, res, ok := strings.Cut(l, "\t")
		if !ok || !strings.HasPrefix(path, "probe ") {
			continue
		}
		lines++
		if !strings.Contains(res, "permission denied") {
			t.Errorf("uid 65534 on the host, %s: %s (want permission denied)", strings.TrimPrefix(path, "probe "), res)
		}
	}
	if lines != len(socks) {
		t.Errorf("the probe reported %d of %d sockets:\n%s", lines, len(socks), out)
	}
}

// TestEgressProbeHelper is TestEgressSocketOtherUser's probe: it connects to each socket and
// sends a proxy request, and prints what happened ("probe PATH\tRESULT").
func TestEgressProbeHelper(t *testing.T) {
	list := os.Getenv(probeEnv)
	if list == "" {
		t.Skip("run by TestEgressSocketOtherUser")
	}
	for _, path := range strings.Split(list, "\n") {
		fmt.Printf("probe %s\t%s\n", path, probeSocket(path))
	}
}

func probeSocket(path string) string {
	// the path may be longer than a socket address may be: connect from its directory
	if err := os.Chdir(filepath.Dir(path)); err != nil {
		return "chdir: " + err.Error()
	}
	c, err := net.DialTimeout("unix", filepath.Base(path), 5*time.Second)
	if err != nil {
		return "connect: " + err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET http://pypi.test/ HTTP/1.1\r\nHost: pypi.test\r\n\r\n")
	b, _ := io.ReadAll(io.LimitReader(c, 200))
	return fmt.Sprintf("CONNECTED, answered %q", b)
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Past the bound across containers a connection is answered 503 naming it (and the request
// still reaches serve, which reads it before closing: the relay, whose write would otherwise
// fail, passes the answer on), and the refusal is audited with the
// container's session; with room, the container's proxy answers (here 403: nothing listed).
func TestEgressTotalBound(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &egressState{dir: t.TempDir(), quota: 4, share: newEgressShare(1, 4), boxes: map[*boxEgress]bool{},
		draining: make(chan struct{}, 64), polAudit: auditPath, server: "test", warn: func(string, ...any) {}}
	s.popts.Key = "docker.network"
	b, err := s.open("0123456789abcdef", "mcpsandbox-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	b.setSession("session-x")
	ask := func(wait time.Duration) string {
		c := dialBox(t, b)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		time.Sleep(wait) // as the relay does: it connects first and passes the request on when it has it
		if _, err := fmt.Fprintf(c, "GET http://pypi.test/ HTTP/1.1\r\nHost: pypi.test\r\n\r\n"); err != nil {
			return "write: " + err.Error()
		}
		out, _ := io.ReadAll(c)
		return string(out)
	}
	if got := ask(0); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("with room: %q, want the proxy's 403", got)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if n, _ := s.share.open(); n == 0 {
			break // the answered connection's handler has returned its place
		} else if time.Now().After(deadline) {
			t.Fatalf("%d places still held after the answer", n)
		}
	}
	other := holdPlaces(t, s.share, &boxEgress{name: "other"}, 1) // another container holds the whole bound
	got := ask(200 * time.Millisecond)
	if !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.HasSuffix(got, "too many egress connections at once from all sandboxes (1; shared between them: this sandbox holds 0, its share now 1): retry later\n") {
		t.Errorf("past the bound across containers: %q", got)
	}
	s.share.release(other[0])
	s.close()
	if _, err := os.Stat(b.dir); !os.IsNotExist(err) {
		t.Errorf("the container's directory survived close: %v", err)
	}
	var limit int
	for _, a := range auditEntries(t, auditPath) {
		if a.Session == "session-x" && a.Rule == "limit" && strings.Contains(a.Reason, "from all sandboxes (1;") {
			limit++
		}
	}
	if limit != 1 {
		t.Errorf("%d audited refusals past the bound across containers, want 1", limit)
	}
}

// A container's socket directory goes when the container is removed, the executor's at Close,
// and a SIGKILLed serve's at the next serve's start; a live serve's and a directory not named
// by serve stay.
func TestEgressDirsRemoved(t *testing.T) {
	publicTempDir(t)
	idx := newIndex(t)
	p := egressPolicy(t, fmt.Sprintf("pypi.test:%d", port(idx.http)))
	dksec.Of(p).Pool = 1
	e := newEgressExec(t, p)
	for i := range 3 {
		r, err := callSession(t, e, "s", fmt.Sprintf(fetchProgram, port(idx.http), "/simple/demo/", port(idx.http)))
		if err != nil || !strings.HasPrefix(r.Stdout, "200") {
			t.Fatalf("call %d: %+v %v", i, r, err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		socks, dirs := egressSockets(t)
		if e.Tracked() == 1 && len(dirs) == 1 && len(socks) == 1 {
			break // the pooled container's, and no other
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 calls: %d containers, directories %v", e.Tracked(), dirs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.Close()
	if _, dirs := egressSockets(t); len(dirs) != 0 {
		t.Errorf("container directories left after Close: %v", dirs)
	}
	if ents, _ := os.ReadDir(egressBase()); len(ents) != 0 {
		t.Errorf("executor directories left after Close: %v", ents)
	}

	// A serve SIGKILLed with a container and its socket directory; one alive; one of another
	// boot (its /tmp survived a reboot); a name serve does not make.
	eng := needEngine(t)
	me := self()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	deadSrv := me
	deadSrv.PID, deadSrv.Start = cmd.Process.Pid, 12345
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	aliveSrv := me
	aliveSrv.PID = live.Process.Pid
	aliveSrv.Start, _ = startTime(aliveSrv.PID)
	oldBoot := me
	oldBoot.Boot = "00000000-0000-0000-0000-000000000000"
	if err := ensurePrivateDir(egressBase(), 0o700); err != nil {
		t.Fatal(err)
	}
	mk := func(o instance) string {
		d := filepath.Join(egressBase(), egressDirName(o))
		if err := os.MkdirAll(filepath.Join(d, randHex(8)), 0o700); err != nil {
			t.Fatal(err)
		}
		return d
	}
	gone := []string{mk(deadSrv), mk(oldBoot)}
	kept := []string{mk(aliveSrv), filepath.Join(egressBase(), "not-ours")}
	os.Mkdir(kept[1], 0o700)
	plant(t, eng, deadSrv)
	newExec(t, eng, testPolicy())
	for _, d := range gone {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("a dead serve's egress directory survived the next serve's start: %s (%v)", d, err)
		}
	}
	for _, d := range kept {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}

// egressSockets lists every egress socket under the base, and the container directories.
func egressSockets(t *testing.T) (socks, dirs []string) {
	t.Helper()
	socks, _ = filepath.Glob(filepath.Join(egressBase(), "*", "*", egressSock))
	dirs, _ = filepath.Glob(filepath.Join(egressBase(), "*", "*"))
	return socks, dirs
}

// Another local user who makes the usual egress directory first (found by an outside attack:
// serve then refused to start) does not stop serve, and gets nothing: serve uses a private
// directory of its own, with a random name, and removes it at Close. A symlink there the same.
func TestEgressBaseTakenByAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a directory owned by another uid")
	}
	for _, how := range []string{"directory", "symlink"} {
		t.Run(how, func(t *testing.T) {
			publicTempDir(t)
			base := egressBase()
			switch how {
			case "directory":
				if err := os.Mkdir(base, 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(base, 4242, 4242); err != nil {
					t.Fatal(err)
				}
			case "symlink":
				if err := os.Symlink(t.TempDir(), base); err != nil {
					t.Fatal(err)
				}
			}
			e := newEgressExec(t, egressPolicy(t, "pypi.test"))
			dir := e.egress.dir
			parent := filepath.Dir(dir)
			if strings.HasPrefix(dir, base+"/") || parent == base {
				t.Fatalf("the executor's directory %s is in the other user's %s", dir, base)
			}
			if st, err := os.Lstat(parent); err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
				t.Fatalf("fallback base %s: %v %v, want a private directory", parent, st.Mode(), err)
			}
			e.Close()
			if _, err := os.Stat(parent); !os.IsNotExist(err) {
				t.Errorf("fallback base left after Close: %v", err)
			}
		})
	}
}

// dialBox connects to a container's egress socket as its relay does (through the directory's
// descriptor: the path may be too long for a socket address).
func dialBox(t *testing.T, b *boxEgress) net.Conn {
	t.Helper()
	d, err := os.Open(b.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	c, err := net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), egressSock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// atk34 F2 through the real proxies: two containers each holding their own bound's worth of
// headless connections fill the bound across containers; a third container's request is still
// answered by its proxy (here 403: nothing is listed), one of the holders' connections being
// closed for it (and audited with the holder's session), while a holder's further connection
// gets 503 naming its share.
func TestEgressSharedBetweenSandboxes(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &egressState{dir: t.TempDir(), quota: 4, share: newEgressShare(8, 4), boxes: map[*boxEgress]bool{},
		draining: make(chan struct{}, 64), polAudit: auditPath, server: "test", warn: func(string, ...any) {}}
	s.popts = egress.Options{Key: "docker.network", MaxConns: 4, Scope: "container"}
	defer s.close()
	waitHeld := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if n, _ := s.share.open(); n == want {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("%d places held, want %d", n, want)
			}
		}
	}
	var hogs []*boxEgress
	var held []net.Conn
	for i := range 2 {
		b, err := s.open(fmt.Sprintf("hog%d", i), fmt.Sprintf("mcpsandbox-hog%d", i))
		if err != nil {
			t.Fatal(err)
		}
		b.setSession(fmt.Sprintf("session-hog%d", i))
		hogs = append(hogs, b)
		for range 4 {
			held = append(held, dialBox(t, b))
		}
	}
	waitHeld(8) // the holders' connections
	ask := func(b *boxEgress) string {
		c := dialBox(t, b)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		time.Sleep(100 * time.Millisecond) // as the relay does: it connects first
		fmt.Fprintf(c, "GET http://pypi.test/ HTTP/1.1\r\nHost: pypi.test\r\n\r\n")
		out, _ := io.ReadAll(c)
		return string(out)
	}
	other, err := s.open("other", "mcpsandbox-other")
	if err != nil {
		t.Fatal(err)
	}
	other.setSession("session-other")
	if got := ask(other); !strings.HasPrefix(got, "HTTP/1.1 403") {
		t.Errorf("another container's request while two hold the bound: %q, want its proxy's 403", got)
	}
	closed := 0
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err == io.EOF {
			closed++
		}
	}
	if closed != 1 {
		t.Errorf("%d of the holders' connections closed, want 1", closed)
	}
	waitHeld(7)       // the answered request's place is back
	dialBox(t, other) // the bound full again, the other container holding its place
	waitHeld(8)
	if got := ask(hogs[0]); !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "from all sandboxes (8; shared between them") {
		t.Errorf("a holder's further connection: %q, want 503 naming the share", got)
	}
	s.close()
	evicted := 0
	for _, a := range auditEntries(t, auditPath) {
		if strings.HasPrefix(a.Session, "session-hog") && a.Rule == "limit" && strings.Contains(a.Reason, "closed: the egress connections of all sandboxes (8) are shared") {
			evicted++
		}
	}
	if evicted != 1 {
		t.Errorf("%d audited connections closed to make room, want 1", evicted)
	}
}

// A container's egress lines name the call it runs (arguments.call), set when a call takes the
// container, and none between a session's calls: with two calls of a session at once, the
// log says which call reached which host (atk39 F5).
func TestEgressLinesNameTheCall(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &egressState{dir: t.TempDir(), quota: 4, share: newEgressShare(8, 4), boxes: map[*boxEgress]bool{},
		draining: make(chan struct{}, 64), polAudit: auditPath, server: "test", warn: func(string, ...any) {}}
	s.popts.Key = "docker.network"
	ask := func(b *boxEgress, host string) {
		c := dialBox(t, b)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		io.ReadAll(c)
	}
	a, err := s.open("0123456789abcdef", "mcpsandbox-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.open("fedcba9876543210", "mcpsandbox-fedcba9876543210")
	if err != nil {
		t.Fatal(err)
	}
	a.setSession("sess")
	a.setCall("call-a")
	b.setSession("sess")
	b.setCall("call-b")
	ask(a, "innocent.test")
	ask(b, "exfil.test")
	// a connection made in a call is that call's, though its decision is written when it ends
	c := dialBox(t, b)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	time.Sleep(50 * time.Millisecond) // accepted while call-b runs
	b.setCall("")                     // between a session's calls
	fmt.Fprintf(c, "GET http://late.test/ HTTP/1.1\r\nHost: late.test\r\n\r\n")
	io.ReadAll(c)
	c.Close()
	ask(b, "between.test")
	time.Sleep(200 * time.Millisecond) // a decision is written when its handler returns
	s.close()
	want := map[string]string{"innocent.test": "call-a", "exfil.test": "call-b", "late.test": "call-b", "between.test": ""}
	seen := 0
	for _, e := range auditEntries(t, auditPath) {
		var args struct{ Host, Call string }
		json.Unmarshal(e.Arguments, &args)
		if w, ok := want[args.Host]; ok {
			seen++
			if args.Call != w || e.Call != "" {
				t.Errorf("egress line for %s: arguments.call %q, call %q; want %q in arguments only", args.Host, args.Call, e.Call, w)
			}
		}
	}
	if seen != 4 {
		t.Errorf("%d egress lines, want 4", seen)
	}
}

// In a session's container a process one call left runs on into the next calls, so a connection
// made while call B runs may be call A's: its line names B as during_call, never as its call
// (atk39b F9: arguments.call named B, a call that made no connection). A per-call container's
// processes are all its call's: its lines keep arguments.call.
func TestSessionEgressNamesTheCallRunningNotTheCaller(t *testing.T) {
	auditPath := filepath.Join(t.TempDir(), "audit.jsonl")
	s := &egressState{dir: t.TempDir(), quota: 4, share: newEgressShare(8, 4), boxes: map[*boxEgress]bool{},
		draining: make(chan struct{}, 64), polAudit: auditPath, server: "test", warn: func(string, ...any) {}}
	s.popts.Key = "docker.network"
	ask := func(b *boxEgress, host string) {
		c := dialBox(t, b)
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", host, host)
		io.ReadAll(c)
	}
	sess, err := s.open("0123456789abcdef", "mcpsandbox-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	one, err := s.open("fedcba9876543210", "mcpsandbox-fedcba9876543210")
	if err != nil {
		t.Fatal(err)
	}
	sess.setSession("sess")
	sess.markShared()
	sess.setCall("call-b")
	one.setSession("sess")
	one.setCall("call-c")
	ask(sess, "background.test")
	ask(one, "own.test")
	time.Sleep(200 * time.Millisecond) // a decision is written when its handler returns
	s.close()
	type args struct {
		Host       string
		Call       *string
		DuringCall *string `json:"during_call"`
	}
	seen := map[string]args{}
	for _, e := range auditEntries(t, auditPath) {
		var a args
		json.Unmarshal(e.Arguments, &a)
		seen[a.Host] = a
	}
	str := func(p *string) string {
		if p == nil {
			return "(none)"
		}
		return *p
	}
	if a, ok := seen["background.test"]; !ok || a.Call != nil || str(a.DuringCall) != "call-b" {
		t.Errorf("session container's line: arguments.call %s, during_call %s; want no call and during_call call-b", str(a.Call), str(a.DuringCall))
	}
	if a, ok := seen["own.test"]; !ok || str(a.Call) != "call-c" || a.DuringCall != nil {
		t.Errorf("per-call container's line: arguments.call %s, during_call %s; want call call-c and no during_call", str(a.Call), str(a.DuringCall))
	}
}
