package sysdeny

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

func TestEveryDeniedNameHasANumber(t *testing.T) {
	for _, n := range Denied {
		if _, ok := numbers[n]; !ok {
			t.Errorf("%s has no number: Numbers() would leave it out of the host-exec filter", n)
		}
	}
	if len(numbers) != len(Denied) {
		t.Errorf("%d numbers for %d names", len(numbers), len(Denied))
	}
}

// TestNumbersAsBefore holds the host-exec helper's filter byte-identical to the list it had
// before the names moved here (the same calls, in the same order).
func TestNumbersAsBefore(t *testing.T) {
	before := []uintptr{
		unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP, unix.SYS_PIDFD_GETFD,
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_UNSHARE, unix.SYS_SETNS,
		unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
		unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
		unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER, unix.SYS_FANOTIFY_INIT,
		unix.SYS_QUOTACTL, unix.SYS_SYSLOG, unix.SYS_VHANGUP, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME,
		unix.SYS_ADJTIMEX, unix.SYS_CLOCK_ADJTIME, unix.SYS_MKNODAT, unix.SYS_PERSONALITY,
		unix.SYS_OPEN_TREE_ATTR, unix.SYS_LISTMOUNT, unix.SYS_STATMOUNT, unix.SYS_MEMFD_SECRET,
	}
	if got := Numbers(); !slices.Equal(got, before) {
		t.Errorf("Numbers() = %v, want %v", got, before)
	}
	const flags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
		unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME
	if CloneNamespaceFlags != flags {
		t.Errorf("CloneNamespaceFlags = %#x, want %#x", CloneNamespaceFlags, flags)
	}
}

// TestReviewedMax (atk40 F8): the filter's ENOSYS default starts right above the newest call the
// list was reviewed against, every denied number is at or below it (a denied call above it
// would get ENOSYS, not EPERM), and the calls newer than the review are above it.
func TestReviewedMax(t *testing.T) {
	if nr, ok := numbers[ReviewedMaxName]; !ok || nr != ReviewedMax() {
		t.Errorf("ReviewedMax() = %d, want %s's number %d", ReviewedMax(), ReviewedMaxName, nr)
	}
	for n, nr := range numbers {
		if nr > ReviewedMax() {
			t.Errorf("%s (%d) is above ReviewedMax (%d)", n, nr, ReviewedMax())
		}
	}
	for _, nr := range []uintptr{unix.SYS_FILE_GETATTR, unix.SYS_FILE_SETATTR, unix.SYS_LISTNS} {
		if nr <= ReviewedMax() {
			t.Errorf("system call %d is newer than the review but not above ReviewedMax (%d)", nr, ReviewedMax())
		}
	}
}
