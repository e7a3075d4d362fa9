package e2bfake

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
)

func sysProcAttr(root bool, uid, gid int) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if root {
		a.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: false, Groups: []uint32{}}
	}
	return a
}

func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Process.Kill()
}

// killTagged kills processes that left their group (setsid, double fork) but still carry the
// sandbox's tag in their environment. A program that also scrubs its environment escapes this:
// the fake is a test double, not a sandbox.
func killTagged(id string) {
	tag := []byte(tagVar + "=" + id + "\x00")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), tag) {
			continue
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// sweepOrphans cleans up after fakes whose process died without Close (a harness run ended by a
// signal): their programs that escaped the parent-death signal by forking, and their directories.
func sweepOrphans() {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if owner, ok := bytes.CutPrefix(kv, []byte(ownerVar+"=")); ok {
				if o, err := strconv.Atoi(string(owner)); err == nil && !processAlive(o) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "e2bfake-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner"))
		if err != nil {
			continue
		}
		if o, err := strconv.Atoi(string(bytes.TrimSpace(b))); err == nil && o != os.Getpid() && !processAlive(o) {
			os.RemoveAll(d)
		}
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
