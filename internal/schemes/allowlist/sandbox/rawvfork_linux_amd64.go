package sandbox

// rawVfork is clone for a child that shares the parent's memory until it execs
// (rawvfork_amd64.s).
//
//go:noescape
func rawVfork(flags uintptr) (pid uintptr, errno uintptr)

// directArch: the direct start exists on amd64 (its vfork needs the assembly above).
const directArch = true
