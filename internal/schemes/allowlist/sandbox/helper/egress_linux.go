package helper

import (
	"fmt"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// EgressPort is where the proxy answers inside the sandbox's network namespace (127.0.0.1).
// The namespace is the call's own, so a fixed port never collides with another call's.
const EgressPort = 3128

// egressListen brings lo up in the helper's network namespace, listens on 127.0.0.1:port and
// sends the listener to serve over the spec socket. The helper keeps no copy.
func egressListen(s *Spec) error {
	port := s.EgressPort
	if port == 0 {
		return nil // no host list: no egress
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("egress: bring up loopback: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("egress: listener socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("egress: listen on 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Listen(fd, 64); err != nil {
		return fmt.Errorf("egress: listen on 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Sendmsg(specFD, []byte{1}, unix.UnixRights(fd), nil, 0); err != nil {
		return fmt.Errorf("egress: hand the listener to serve: %w", err)
	}
	return nil
}

// dropCaps clears what serve's start gave this thread (the one that execs) in a user namespace
// (CAP_SYS_ADMIN for its mounts, CAP_NET_ADMIN for lo): the ambient set, and when the helper
// does not change uid (which clears capabilities by itself), every set. It runs after the
// mounts and the egress listener, before anything of the command: the command never holds a
// capability, so it can unmount nothing (the workspace's layer, the read-only binds).
func dropCaps(s *Spec) {
	if mutated("drop-caps") {
		return
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if s.DropUID {
		return
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_ = unix.Capset(&hdr, &data[0])
}

// loopbackUp sets IFF_UP on lo (a new network namespace starts with it down).
func loopbackUp() error {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr)
}

// egressLandlock is the Landlock network rule of a call with egress: connect to the proxy's port
// (the only TCP the ruleset allows; bind is never allowed). None without egress.
func egressLandlock(s *Spec) []landlock.Rule {
	if s.EgressPort == 0 {
		return nil
	}
	return []landlock.Rule{landlock.ConnectTCP(uint16(s.EgressPort))}
}

// emitSocketTCPOnly emits the seccomp block a socket() call jumps to when the policy has a host
// list: AF_INET or AF_INET6, type SOCK_STREAM (with any of the flags the kernel accepts),
// protocol 0 or TCP; every other socket fails with EACCES, as all do with network = false. The
// kernel reads the three arguments as C ints, so the low 32 bits are what it acts on.
func emitSocketTCPOnly(emit func(code uint16, k uint32), jumpTo func(code uint16, k uint32, label string), labels map[string]int, prog func() int) {
	const (
		argDomain = 16 // seccomp_data.args[0], low word (little endian)
		argType   = 24
		argProto  = 32
		typeMask  = 0xf // SOCK_TYPE_MASK: SOCK_NONBLOCK and SOCK_CLOEXEC live above it
	)
	deny := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	emit(bpfLdWAbs, argDomain)
	jumpTo(bpfJeqK, unix.AF_INET, "sock_type")
	jumpTo(bpfJeqK, unix.AF_INET6, "sock_type")
	emit(bpfRetK, deny)
	labels["sock_type"] = prog()
	emit(bpfLdWAbs, argType)
	emit(unix.BPF_ALU|unix.BPF_AND|unix.BPF_K, typeMask)
	jumpTo(bpfJeqK, unix.SOCK_STREAM, "sock_proto")
	emit(bpfRetK, deny)
	labels["sock_proto"] = prog()
	emit(bpfLdWAbs, argProto)
	jumpTo(bpfJeqK, 0, "sock_ok")
	jumpTo(bpfJeqK, unix.IPPROTO_TCP, "sock_ok")
	emit(bpfRetK, deny)
	labels["sock_ok"] = prog()
	emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
}
