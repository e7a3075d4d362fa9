package sysdeny

import "golang.org/x/sys/unix"

// numbers are Denied's system call numbers on this architecture.
var numbers = map[string]uintptr{
	"ptrace": unix.SYS_PTRACE, "process_vm_readv": unix.SYS_PROCESS_VM_READV, "process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
	"kcmp": unix.SYS_KCMP, "pidfd_getfd": unix.SYS_PIDFD_GETFD,
	"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT, "chroot": unix.SYS_CHROOT,
	"unshare": unix.SYS_UNSHARE, "setns": unix.SYS_SETNS,
	"open_tree": unix.SYS_OPEN_TREE, "move_mount": unix.SYS_MOVE_MOUNT, "fsopen": unix.SYS_FSOPEN, "fsconfig": unix.SYS_FSCONFIG,
	"fsmount": unix.SYS_FSMOUNT, "fspick": unix.SYS_FSPICK, "mount_setattr": unix.SYS_MOUNT_SETATTR,
	"keyctl": unix.SYS_KEYCTL, "add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY, "bpf": unix.SYS_BPF,
	"perf_event_open": unix.SYS_PERF_EVENT_OPEN, "userfaultfd": unix.SYS_USERFAULTFD,
	"kexec_load": unix.SYS_KEXEC_LOAD, "kexec_file_load": unix.SYS_KEXEC_FILE_LOAD, "init_module": unix.SYS_INIT_MODULE,
	"finit_module": unix.SYS_FINIT_MODULE, "delete_module": unix.SYS_DELETE_MODULE,
	"reboot": unix.SYS_REBOOT, "swapon": unix.SYS_SWAPON, "swapoff": unix.SYS_SWAPOFF, "acct": unix.SYS_ACCT,
	"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT, "name_to_handle_at": unix.SYS_NAME_TO_HANDLE_AT,
	"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER, "io_uring_register": unix.SYS_IO_URING_REGISTER,
	"fanotify_init": unix.SYS_FANOTIFY_INIT,
	"quotactl":      unix.SYS_QUOTACTL, "syslog": unix.SYS_SYSLOG, "vhangup": unix.SYS_VHANGUP, "settimeofday": unix.SYS_SETTIMEOFDAY,
	"clock_settime": unix.SYS_CLOCK_SETTIME,
	"adjtimex":      unix.SYS_ADJTIMEX, "clock_adjtime": unix.SYS_CLOCK_ADJTIME, "mknodat": unix.SYS_MKNODAT, "personality": unix.SYS_PERSONALITY,
	"open_tree_attr": unix.SYS_OPEN_TREE_ATTR, "listmount": unix.SYS_LISTMOUNT, "statmount": unix.SYS_STATMOUNT,
	"memfd_secret": unix.SYS_MEMFD_SECRET,
}

// ReviewedMax is ReviewedMaxName's number on this architecture: the filter's default above it
// is ENOSYS.
func ReviewedMax() uintptr { return unix.SYS_OPEN_TREE_ATTR }

// Numbers is Denied by number, in Denied's order. A name without a number here is left out;
// TestEveryDeniedNameHasANumber holds the table complete.
func Numbers() []uintptr {
	out := make([]uintptr, 0, len(Denied))
	for _, n := range Denied {
		if nr, ok := numbers[n]; ok {
			out = append(out, nr)
		}
	}
	return out
}
