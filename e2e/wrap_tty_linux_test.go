package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWrapServerCannotReachTheTerminal: wrap runs with a pseudo-terminal as its stderr and
// controlling terminal (run by hand, or by a client that lets its servers inherit a terminal);
// the wrapped server tries to type into every descriptor it has (TIOCSTI) and writes OSC 52 to
// its stderr. Nothing reaches the terminal's input, the server holds no terminal and leads a
// session of its own (none to type into), and its controls reach the terminal shown, marked as
// the server's (atk36 F5). Catches wrap-stderr-passed and helper-same-session.
func TestWrapServerCannotReachTheTerminal(t *testing.T) {
	r := newWrapRig(t, "")
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	srv := filepath.Join(dir, "srv.py")
	write(t, srv, `import os, sys, fcntl, termios, json
r = {"pid": os.getpid(), "sid": os.getsid(0)}
for fd in (0, 1, 2):
    r["tty%d" % fd] = os.isatty(fd)
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"X")
        r["sti%d" % fd] = "typed"
    except OSError as e:
        r["sti%d" % fd] = e.errno
try:
    os.open("/dev/tty", os.O_RDWR)
    r["devtty"] = "opened"
except OSError as e:
    r["devtty"] = e.errno
os.write(2, b"\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07OSC52\n")
os.write(2, ("PROBE " + json.dumps(r) + "\n").encode())
`, 0o644)
	b, err := os.ReadFile(r.policy)
	if err != nil {
		t.Fatal(err)
	}
	write(t, r.policy, strings.Replace(string(b), "[wrap]\n", fmt.Sprintf("[wrap]\nread = [%q]\n", dir), 1), 0o600)

	ptmx, pts := openTestPty(t)
	cmd := exec.Command(binPath, "wrap", "--policy", r.policy, "--", python, srv)
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinW.Close() // the client stays: the server ends by itself
	cmd.Stdin, cmd.Stderr = stdinR, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 2}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdinR.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var shown []byte
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			shown = append(shown, buf[:n]...)
			if err != nil {
				return
			}
		}
	}()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("wrap did not end after its server did")
	}
	// what the server may have typed is in the terminal's input queue, read on its side
	if err := unix.SetNonblock(int(pts.Fd()), true); err != nil {
		t.Fatal(err)
	}
	typed := make([]byte, 256)
	n, rerr := unix.Read(int(pts.Fd()), typed)
	pts.Close() // the master's reader ends (EIO) once no one holds the terminal
	select {
	case <-readDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	if n > 0 {
		t.Errorf("the wrapped server typed %q into the terminal's input (the user's shell would run it)", typed[:n])
	} else if !errors.Is(rerr, unix.EAGAIN) {
		t.Errorf("read the terminal's input: %v", rerr)
	}
	out := string(shown)
	t.Logf("wrap: %v; the terminal showed:\n%s", werr, out)
	if strings.Contains(out, "\x1b]52") {
		t.Errorf("the server's OSC 52 reached the terminal raw:\n%q", out)
	}
	if !strings.Contains(out, "server: ␛]52;c;") {
		t.Errorf("the server's stderr is not shown, marked as its own:\n%q", out)
	}
	i := strings.Index(out, "PROBE ")
	if i < 0 {
		t.Fatalf("no probe line from the server:\n%q", out)
	}
	line, _, _ := strings.Cut(out[i+len("PROBE "):], "\r")
	var probe map[string]any
	if err := json.Unmarshal([]byte(line), &probe); err != nil {
		t.Fatalf("the probe line %q: %v", line, err)
	}
	for fd := 0; fd < 3; fd++ {
		if probe[fmt.Sprintf("tty%d", fd)] != false || probe[fmt.Sprintf("sti%d", fd)] == "typed" {
			t.Errorf("the server's fd %d is a terminal it can type into: %v", fd, probe)
		}
	}
	if probe["devtty"] == "opened" {
		t.Errorf("the server opened /dev/tty: %v", probe)
	}
	if probe["sid"] != probe["pid"] {
		t.Errorf("the server is not in a session of its own (sid %v, pid %v): it shares wrap's controlling terminal", probe["sid"], probe["pid"])
	}
}

// openTestPty opens a pseudo-terminal pair, closed at the test's end.
func openTestPty(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		t.Fatal(err)
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		unix.Close(m)
		t.Fatal(errno)
	}
	ptmx, pts = os.NewFile(uintptr(m), "ptmx"), os.NewFile(uintptr(s), "pts")
	t.Cleanup(func() { ptmx.Close(); pts.Close() })
	return ptmx, pts
}
