package helper

import (
	"testing"

	"golang.org/x/sys/unix"
)

// With a host list, socket() makes TCP sockets and nothing else: every other family, type and
// protocol fails as under network = false, while the rest of the filter is unchanged.
func TestSeccompFilterTCPOnly(t *testing.T) {
	const arch = unix.AUDIT_ARCH_X86_64
	prog, err := seccompFilterNet(true, true)
	if err != nil {
		t.Skipf("no filter for this architecture: %v", err)
	}
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	eacces := unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	flags := uint64(unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC)
	cases := []struct {
		name string
		nr   uint32
		args []uint64
		want uint32
	}{
		{"tcp4", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}, allow},
		{"tcp6", unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_STREAM, 0}, allow},
		{"tcp4 explicit protocol", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP}, allow},
		{"tcp4 nonblock cloexec", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM | flags, 0}, allow},
		{"tcp4, garbage in the high words", unix.SYS_SOCKET, []uint64{1<<40 | unix.AF_INET, 1<<40 | unix.SOCK_STREAM, 1 << 40}, allow},
		{"udp4", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_DGRAM, 0}, eacces},
		{"udp6 nonblock", unix.SYS_SOCKET, []uint64{unix.AF_INET6, unix.SOCK_DGRAM | flags, 0}, eacces},
		{"raw icmp", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP}, eacces},
		{"sctp stream", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP}, eacces},
		{"mptcp stream", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP}, eacces},
		{"seqpacket", unix.SYS_SOCKET, []uint64{unix.AF_INET, unix.SOCK_SEQPACKET, 0}, eacces},
		{"unix stream", unix.SYS_SOCKET, []uint64{unix.AF_UNIX, unix.SOCK_STREAM, 0}, eacces},
		{"netlink", unix.SYS_SOCKET, []uint64{unix.AF_NETLINK, unix.SOCK_RAW, 0}, eacces},
		{"packet", unix.SYS_SOCKET, []uint64{unix.AF_PACKET, unix.SOCK_RAW, 0}, eacces},
		{"vsock", unix.SYS_SOCKET, []uint64{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, eacces},
		{"ptrace still denied", unix.SYS_PTRACE, nil, eperm},
		{"clone into a network namespace still denied", unix.SYS_CLONE, []uint64{unix.CLONE_NEWNET}, eperm},
		{"connect is Landlock's", unix.SYS_CONNECT, nil, allow},
		{"read", unix.SYS_READ, nil, allow},
	}
	for _, c := range cases {
		if got := runFilter(t, prog, arch, c.nr, c.args...); got != c.want {
			t.Errorf("%s: verdict %#x, want %#x", c.name, got, c.want)
		}
	}
	for _, nr := range append(deniedSyscalls[:len(deniedSyscalls):len(deniedSyscalls)], archDenied...) {
		if got := runFilter(t, prog, arch, uint32(nr)); got != eperm {
			t.Errorf("denied syscall %d: verdict %#x", nr, got)
		}
	}
	// Negative control: the same TCP socket under network = false is refused, under
	// network = true allowed without looking at its arguments.
	none, _ := seccompFilterNet(true, false)
	all, _ := seccompFilterNet(false, false)
	if got := runFilter(t, none, arch, unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0); got != eacces {
		t.Errorf("network = false lets a TCP socket through: %#x", got)
	}
	if got := runFilter(t, all, arch, unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_DGRAM, 0); got != allow {
		t.Errorf("network = true refuses a UDP socket: %#x", got)
	}
}
