//go:build !linux

package sandbox

import (
	"errors"
	"net"
	"os"
)

// The egress proxy's sockets are Linux-only (startEgress refuses host lists elsewhere).

var errEgressLinux = errors.New("docker.network host lists need Linux")

func ensurePrivateDir(string, os.FileMode) error { return errEgressLinux }

func checkPrivateDir(string) error { return errEgressLinux }

func listenUnixIn(string, string) (*net.UnixListener, error) { return nil, errEgressLinux }
