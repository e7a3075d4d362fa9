//go:build unix

package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// dialErr is the error chain the Docker client returns when connect(2) on the socket fails.
func dialErr(errno syscall.Errno) error {
	op := &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", errno)}
	return fmt.Errorf("permission denied while trying to connect to the Docker daemon socket: %w", op)
}

// A socket refusing this user (EACCES, EPERM) is told apart from one nobody listens on or that
// is missing, and from an engine's own refusal: only the first is about the user's groups.
func TestDeniedClassifies(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{dialErr(syscall.EACCES), true},
		{dialErr(syscall.EPERM), true},
		{dialErr(syscall.ECONNREFUSED), false},
		{dialErr(syscall.ENOENT), false},
		{fmt.Errorf("Error response from daemon: authorization denied by plugin: %w", os.ErrPermission), false},
	} {
		if got := Denied(c.err); got != c.want {
			t.Errorf("Denied(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	// Real dials: a missing socket and one nobody listens on keep the advice to start Docker.
	dir := t.TempDir()
	refused := filepath.Join(dir, "refused.sock")
	l, err := net.Listen("unix", refused)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	for _, sock := range []string{filepath.Join(dir, "missing.sock"), refused} {
		_, err := versionAt(t, sock)
		if !errors.Is(err, ErrUnreachable) || Denied(err) || !strings.Contains(err.Error(), "dockerd") || strings.Contains(err.Error(), "usermod") {
			t.Errorf("%s: %v; want ErrUnreachable, not Denied, with how to start Docker", sock, err)
		}
	}
}

func versionAt(t *testing.T, sock string) (string, error) {
	t.Helper()
	t.Setenv("DOCKER_HOST", "unix://"+sock)
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Version(context.Background())
	return v.Version, err
}

// deniedEnv carries the unprivileged run's sockets and what each one's advice must say
// (socket=want, ";"-separated).
const deniedEnv = "MCPSANDBOX_DENIED_SOCKETS"

// A user the engine's socket refuses (outside the docker group) is told that, with the
// socket's owner, group and mode and how to join the group, not to start or install Docker.
// Root passes every permission check, so as root the dials run in a copy of this test as
// nobody (uid 65534); as another user, on a socket of mode 0000.
func TestDeniedSocketNamesTheGroup(t *testing.T) {
	if pairs := os.Getenv(deniedEnv); pairs != "" {
		for _, p := range strings.Split(pairs, ";") {
			sock, want, _ := strings.Cut(p, "=")
			checkDenied(t, sock, want)
		}
		return
	}
	dir := testenv.SharedDir(t)
	if os.Geteuid() != 0 {
		checkDenied(t, testenv.UnixSocket(t, dir, "engine.sock", 0), "mode 0000")
		return
	}
	rootOwned := testenv.UnixSocket(t, dir, "root.sock", 0o660) // as an engine started with no docker group leaves it
	pairs := []string{rootOwned + "=owner root, group root, mode 0660): create a docker group (sudo groupadd docker)"}
	if g, err := user.LookupGroup("docker"); err == nil {
		gid, _ := strconv.Atoi(g.Gid)
		sock := testenv.UnixSocket(t, dir, "docker.sock", 0o660)
		if err := os.Chown(sock, 0, gid); err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, sock+"=owner root, group docker, mode 0660): add yourself to the socket's group (sudo usermod -aG docker $USER)")
	}
	t.Logf("as uid 65534:\n%s", testenv.AsNobody(t, dir, "^TestDeniedSocketNamesTheGroup$", deniedEnv+"="+strings.Join(pairs, ";")))
}

func checkDenied(t *testing.T, sock, want string) {
	t.Helper()
	_, err := versionAt(t, sock)
	msg := fmt.Sprint(err)
	if !errors.Is(err, ErrUnreachable) || !Denied(err) {
		t.Errorf("%s: %v; want ErrUnreachable and Denied", sock, err)
	}
	for _, w := range []string{want, "is likely running", "then log in again", "a running shell or program does not gain a new group",
		"root-equivalent", "rootless Docker", "DOCKER_HOST"} {
		if !strings.Contains(msg, w) {
			t.Errorf("%s: %s\nwant it to say %q", sock, msg, w)
		}
	}
	if strings.Contains(msg, "systemctl start docker") || strings.Contains(msg, "apt-get install") {
		t.Errorf("%s: %s\nwant no advice to start or install Docker: it runs", sock, msg)
	}
}
