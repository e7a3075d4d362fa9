//go:build unix

package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var sigStop, sigCont, sigTerm = syscall.SIGSTOP, syscall.SIGCONT, syscall.SIGTERM

type statT struct {
	Size  int64
	Nlink uint64
	Uid   uint32
}

// lstat is the owner and link count the detectors judge a file by.
func lstat(p string) (statT, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil {
		return statT{}, false
	}
	return statT{Size: st.Size, Nlink: uint64(st.Nlink), Uid: st.Uid}, true
}

// stopped reports whether the process is stopped (state T in /proc/PID/stat); true where /proc
// cannot tell, so callers never wait in vain.
func stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'T' || b[i+2] == 't'
}

// gone reports whether pid has ended (no /proc entry, or a zombie waiting to be reaped).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err) || errors.Is(err, syscall.ESRCH)
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X')
}

// touched says how pid was reached from elsewhere: traced, stopped or gone ("" if untouched).
func touched(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "gone: its /proc entry vanished (killed)"
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			if strings.HasPrefix(v, "Z") || strings.HasPrefix(v, "X") {
				return "gone: it exited or was killed (" + v + ")"
			}
			if strings.HasPrefix(v, "T") || strings.HasPrefix(v, "t") {
				return "stopped (" + v + ")"
			}
		case "TracerPid":
			if v != "0" {
				return "traced by pid " + v
			}
		}
	}
	return ""
}

// startSibling starts the arena's sibling (see SiblingPID): `sleep`, as uid 65534 when the
// harness is root, with the server's secret in its environment and cwd /.
func (a *Arena) startSibling() error {
	bin, err := exec.LookPath("sleep")
	if err != nil {
		return fmt.Errorf("the harness's sibling process needs `sleep` on PATH: %w", err)
	}
	cmd := exec.Command(bin, "3600")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", SiblingSecretEnv + "=" + a.Secret}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the harness's sibling process: %w", err)
	}
	a.sibling = cmd
	return nil
}

// RunOutside runs argv outside any sandbox, in the workspace, as the sandbox's uid when the
// harness is root (the arena's SandboxUID, else 65534), for at most 20s, and returns what it
// printed: a control's evidence that an attack works where no layer stops it.
func (a *Arena) RunOutside(argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = a.WS
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	if os.Geteuid() == 0 {
		uid := uint32(65534)
		if a.SandboxUID > 0 {
			uid = uint32(a.SandboxUID)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// mkfifo makes a named pipe (a scenario's setup).
func mkfifo(p string) error { return syscall.Mkfifo(p, 0o666) }
