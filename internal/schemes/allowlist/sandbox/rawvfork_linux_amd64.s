#include "textflag.h"

// func rawVforkSyscall(trap, a1, a2 uintptr) (r1 uintptr, errno uintptr)
//
// clone(a1 = flags, 0, ...) or clone3(a1 = args, a2 = size) for a CLONE_VM|CLONE_VFORK child,
// which runs on the parent's stack until it execs: the return address is kept in a register
// across the system call, so the child's use of the stack cannot change where the parent
// returns to (the syscall package's rawVforkSyscall does the same). Called by rawChild itself,
// never through a wrapper: the child returns into rawChild's frame, the only one the parent
// returns to after it.
TEXT ·rawVforkSyscall(SB),NOSPLIT|NOFRAME,$0-40
	MOVQ	a1+8(FP), DI
	MOVQ	a2+16(FP), SI
	MOVQ	$0, DX
	MOVQ	$0, R10
	MOVQ	$0, R8
	MOVQ	$0, R9
	MOVQ	trap+0(FP), AX
	POPQ	R12
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, r1+24(FP)
	NEGQ	AX
	MOVQ	AX, errno+32(FP)
	RET
ok:
	MOVQ	AX, r1+24(FP)
	MOVQ	$0, errno+32(FP)
	RET
