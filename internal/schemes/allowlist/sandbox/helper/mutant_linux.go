package helper

import (
	"github.com/mcpsandbox/mcpsandbox/internal/mutant"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// mutated: a mechanism switched off by `make mutants`; the constant false in a release build.
func mutated(name string) bool { return mutant.On(name) }

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
