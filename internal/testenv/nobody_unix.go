//go:build unix

package testenv

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// SharedDir is a directory under /var/tmp that every user may search, removed when t ends: a
// test's own temporary directories are root's alone, where uid 65534 cannot reach a file.
func SharedDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// UnixSocket listens on dir/name with the given mode until t ends (nothing accepts: a connect
// that the socket's permissions let through just waits in its backlog).
func UnixSocket(t testing.TB, dir, name string, mode os.FileMode) string {
	t.Helper()
	sock := filepath.Join(dir, name)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Chmod(sock, mode); err != nil {
		t.Fatal(err)
	}
	return sock
}

// AsNobody runs this test binary's tests matching run as uid 65534 (no groups), from a copy in
// dir (a SharedDir: the build's own directory is root's alone), with env added to a bare
// environment, and fails t unless they passed. Root passes every permission check: this is
// how a root test run sees what a user is refused.
func AsNobody(t testing.TB, dir, run string, env ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(exe))
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", run, "-test.v", "-test.count", "1")
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + dir, "TMPDIR=" + dir, "PATH=/usr/bin:/bin", "MCPSANDBOX_MUTANT=" + os.Getenv("MCPSANDBOX_MUTANT")}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: ") || strings.Contains(string(out), "--- FAIL") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	return string(out)
}
