# INSIDE the sandbox: the mount API family on kernel 6.18: open_tree is denied by the filter, open_tree_attr (6.15)
# reaches the kernel; statmount/listmount (6.8), file_getattr/file_setattr (6.17), memfd_secret (5.14) too.
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def sc(name, nr, *a):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) if isinstance(x, int) else x for x in a]); e = ctypes.get_errno()
    print(f"{name:38} r={r:3} errno={errno.errorcode.get(e, e) if r < 0 else '-'}")
AT_FDCWD = -100; OPEN_TREE_CLONE = 1
sc("open_tree(\".\", 0) [denied by the filter]", 428, AT_FDCWD, b".", 0)
sc("open_tree_attr(\".\", 0, NULL, 0)", 467, AT_FDCWD, b".", 0, None, 0)
sc("open_tree_attr(\".\", OPEN_TREE_CLONE, NULL, 0)", 467, AT_FDCWD, b".", OPEN_TREE_CLONE, None, 0)
buf = ctypes.create_string_buffer(4096)
req = (ctypes.c_uint64 * 4)(32, 0x2000000000000001 if False else 0, 0, 0)
sc("listmount(bad req)", 458, ctypes.byref(req), buf, 16, 0)
sc("file_getattr(\".\")", 468, AT_FDCWD, b".", buf, 32, 0)
sc("memfd_secret(0)", 447, 0)
