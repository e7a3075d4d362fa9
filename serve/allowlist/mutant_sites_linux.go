package allowlist

import (
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Access classes the landlock-read and landlock-write mutants allow everywhere.
const (
	landlockReadClasses  = landlock.AccessFSSet(llsys.AccessFSReadFile | llsys.AccessFSReadDir)
	landlockWriteClasses = landlock.AccessFSSet(llsys.AccessFSWriteFile | llsys.AccessFSTruncate | llsys.AccessFSRemoveDir |
		llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg |
		llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym |
		llsys.AccessFSRefer)
)

// mutantRules are Landlock rules a mutant build adds: read or write access everywhere, as if the
// ruleset did not handle that class. A release build adds none.
func mutantRules() []landlock.Rule {
	var rs []landlock.Rule
	if mutated("landlock-read") {
		rs = append(rs, landlock.PathAccess(landlockReadClasses, "/"))
	}
	if mutated("landlock-write") {
		rs = append(rs, landlock.PathAccess(landlockWriteClasses, "/"))
	}
	return rs
}

// mutateRlimits drops the limits a mutant build switches off; a release build returns lims.
func mutateRlimits(lims []Rlimit) []Rlimit {
	if !mutantBuild {
		return lims
	}
	drop := func(res int) {
		lims = slices.DeleteFunc(lims, func(l Rlimit) bool { return l.Resource == res })
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

// mountTmp mounts the call's private /tmp.
func mountTmp(opts string) error {
	if mutated("private-tmp") {
		return nil
	}
	return unix.Mount("tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts)
}

// mutateROBinds is the list of paths to mount read-only.
func mutateROBinds(ps []string) []string {
	if mutated("ro-binds") {
		return nil
	}
	return ps
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
