//go:build linux && !amd64

package sandbox

import "syscall"

// rawVforkSyscall is not implemented here: directArch keeps calls on the exec helper.
func rawVforkSyscall(uintptr, uintptr, uintptr) (uintptr, uintptr) {
	return ^uintptr(0), uintptr(syscall.ENOSYS)
}

// directArch: without the amd64 vfork, every call goes through the exec helper.
const directArch = false
