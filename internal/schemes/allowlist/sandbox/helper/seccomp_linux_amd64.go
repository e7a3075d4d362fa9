package helper

import "golang.org/x/sys/unix"

// archDenied are denied system calls that exist only on this architecture (arm64 has mknodat
// alone, which deniedSyscalls holds).
var archDenied = []uintptr{unix.SYS_MKNOD}
