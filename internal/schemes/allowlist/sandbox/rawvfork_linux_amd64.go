package sandbox

// rawVforkSyscall is clone or clone3 for a child that shares the parent's memory until it
// execs (rawvfork_linux_amd64.s).
//
//go:noescape
func rawVforkSyscall(trap, a1, a2 uintptr) (r1 uintptr, errno uintptr)

// directArch: the direct start exists on amd64 (its vfork needs the assembly above).
const directArch = true
