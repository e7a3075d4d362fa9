package sandbox

import (
	"slices"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"

	"golang.org/x/sys/unix"
)

// mutateRlimits drops the limits a mutant build switches off; a release build returns lims.
func mutateRlimits(lims []helper.Rlimit) []helper.Rlimit {
	if !mutantBuild {
		return lims
	}
	drop := func(res int) {
		lims = slices.DeleteFunc(lims, func(l helper.Rlimit) bool { return l.Resource == res })
	}
	if mutated("rlimit-nproc") {
		drop(unix.RLIMIT_NPROC)
	}
	if mutated("rlimit-as") {
		drop(unix.RLIMIT_AS)
	}
	if mutated("rlimit-fsize") {
		drop(unix.RLIMIT_FSIZE)
	}
	if mutated("rlimit-nofile") {
		drop(unix.RLIMIT_NOFILE)
	}
	if mutated("rlimit-cpu") {
		drop(unix.RLIMIT_CPU)
	}
	return lims
}

// groupKill kills the helper's process group: the tree's end on hosts without a PID namespace.
func groupKill(pid int) {
	if !mutated("group-kill") {
		_ = unix.Kill(-pid, unix.SIGKILL)
	}
}

// mutateKey is the hash cache's key for a file.
func mutateKey(k fileKey) fileKey {
	if mutated("hash-cache-key") {
		k.mtimeNsec, k.ctimeNsec = 0, 0
	}
	return k
}

// mutateAttr is how the helper is started, with the namespaces a mutant build switches off.
func mutateAttr(a nsAttr) nsAttr {
	if !mutantBuild {
		return a
	}
	if mutated("pidns") {
		a.flags &^= unix.CLONE_NEWPID
	}
	if mutated("netns") {
		a.flags &^= unix.CLONE_NEWNET
	}
	if mutated("mountns") {
		a.flags &^= unix.CLONE_NEWNS
	}
	if mutated("ipc-uts-ns") {
		a.flags &^= unix.CLONE_NEWIPC | unix.CLONE_NEWUTS
	}
	if mutated("userns") {
		a.flags &^= unix.CLONE_NEWUSER
	}
	a.userNS = a.userNS && a.has(unix.CLONE_NEWUSER)
	return a
}
