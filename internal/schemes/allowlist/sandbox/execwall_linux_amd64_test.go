package sandbox

import (
	"strings"
	"testing"
)

// TestCommandsCannotExecAMemfd (atk40 F1): a memfd is a file with no path, so Landlock does not
// judge its execution: memfd_create + exec of /proc/self/fd/N or execveat(AT_EMPTY_PATH) ran any
// bytes. memfd_create now needs MFD_NOEXEC_SEAL (a data memfd still works), and such a memfd
// cannot be made executable or run. Both starts (direct and through the helper).
func TestCommandsCannotExecAMemfd(t *testing.T) {
	for _, viaHelper := range []bool{false, true} {
		e := pythonExecutor(t, nil, viaHelper)
		res := runPython(t, e, `
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
elf = open("/usr/bin/true", "rb").read()
try:
    fd = os.memfd_create("x", 0)
    os.write(fd, elf)
    os.execv("/proc/self/fd/%d" % fd, ["x"])
except OSError as e:
    print("memfd plain:", e.errno)
fd = os.memfd_create("x", 0x8 | os.MFD_CLOEXEC)  # MFD_NOEXEC_SEAL
os.write(fd, elf)
print("memfd noexec data:", len(elf) == os.fstat(fd).st_size)
try:
    os.fchmod(fd, 0o755)
    print("fchmod +x: ran")
except OSError as e:
    print("fchmod +x:", e.errno)
ctypes.set_errno(0)
r = libc.syscall(322, fd, b"", None, None, 0x1000)  # execveat(fd, "", NULL, NULL, AT_EMPTY_PATH)
print("execveat noexec memfd:", r, ctypes.get_errno())
`)
		for _, want := range []string{"memfd plain: 13", "memfd noexec data: True", "fchmod +x: 1", "execveat noexec memfd: -1 13"} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("viaHelper=%v: want %q in %q %q", viaHelper, want, res.Stdout, res.Stderr)
			}
		}
	}
}

// TestNewerSystemCallsAnswerENOSYS (atk40 F8): the filter's default above the reviewed table is
// ENOSYS (file_getattr, 6.17; a number no kernel has), and the reviewed newer calls that open
// the mount family or secret memory are EPERM (open_tree_attr, listmount, statmount,
// memfd_secret). Both starts.
func TestNewerSystemCallsAnswerENOSYS(t *testing.T) {
	for _, viaHelper := range []bool{false, true} {
		e := pythonExecutor(t, nil, viaHelper)
		res := runPython(t, e, `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
def sc(name, nr, *a):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    print(name, r, ctypes.get_errno() if r < 0 else 0)
sc("open_tree_attr", 467, -100, b".", 0, None, 0)
sc("listmount", 458, None, None, 0, 0)
sc("statmount", 457, None, None, 0, 0)
sc("memfd_secret", 447, 0)
sc("file_getattr", 468, -100, b".", None, 0, 0)
sc("unknown", 1000)
`)
		for _, want := range []string{"open_tree_attr -1 1\n", "listmount -1 1\n", "statmount -1 1\n", "memfd_secret -1 1\n", "file_getattr -1 38\n", "unknown -1 38\n"} {
			if !strings.Contains(res.Stdout, want) {
				t.Errorf("viaHelper=%v: want %q in %q %q", viaHelper, want, res.Stdout, res.Stderr)
			}
		}
	}
}
