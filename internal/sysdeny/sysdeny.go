// Package sysdeny is the one list of system calls no sandboxed program is given, whatever
// the scheme: the ones that inspect or change other processes, the kernel, mounts or
// namespaces, or open rarely needed kernel interfaces with a history of exploitable bugs
// (io_uring, bpf, userfaultfd, perf, keyrings). The host-exec helper compiles it into its own
// classic BPF filter (by number); the container scheme leaves the same names out of the
// seccomp profile it hands the engine (by name). A name here is denied in both.
package sysdeny

// Denied are the denied calls by their kernel names, in the order the host-exec helper's filter
// tests them (its program is built from this order; keep appends at the end).
var Denied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	"keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"reboot", "swapon", "swapoff", "acct", "open_by_handle_at", "name_to_handle_at",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "fanotify_init",
	"quotactl", "syslog", "vhangup", "settimeofday", "clock_settime",
	"adjtimex", "clock_adjtime", "mknodat", "personality",
	// reviewed with the table up to ReviewedMax (atk40 F8): the mount family's newest member and
	// the mount listing (the namespace's mounts, nothing a command needs), and secret memory
	// (pages the kernel hides even from itself: nothing an allowlisted program needs)
	"open_tree_attr", "listmount", "statmount", "memfd_secret",
}

// ReviewedMaxName is the newest system call the lists were reviewed against (Linux 6.15's
// open_tree_attr, the same number on every architecture the helper builds for). The host-exec
// helper's filter answers ENOSYS to every number above it (sysdeny.ReviewedMax): a call the
// kernel gained later (file_getattr, file_setattr, listns, …) fails as on an older kernel, which
// libc and programs handle, instead of reaching the kernel unreviewed (atk40 F8). Raising it is
// a review: read each new call's man page and add the ones a command must not have to Denied.
const ReviewedMaxName = "open_tree_attr"

// DeniedLegacy are denied calls that exist only on some architectures (x86-64's mknod; arm64
// has mknodat alone).
var DeniedLegacy = []string{"mknod"}

// CloneNamespaceFlags are clone(2)'s flags that create namespaces (CLONE_NEWNS, NEWUTS, NEWIPC,
// NEWUSER, NEWPID, NEWNET, NEWCGROUP, NEWTIME): a clone with any of them is refused. clone3
// passes its flags in memory a filter cannot read, so it answers ENOSYS and libc falls back to
// clone.
const CloneNamespaceFlags = 0x00020000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x02000000 | 0x00000080

// IsDenied reports whether name is in Denied or DeniedLegacy.
func IsDenied(name string) bool {
	for _, l := range [][]string{Denied, DeniedLegacy} {
		for _, n := range l {
			if n == name {
				return true
			}
		}
	}
	return false
}
