package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A harness killed outright (SIGKILL: no closer runs) takes its serve with it, and that serve
// removes its containers on its way out: serve is started
// with SIGTERM as its parent-death signal (trial34: a verify killed with -9 left its harness's
// HTTP serve running; a serve over stdio ends at its stdin's end anyway, one over HTTP, which a
// session policy gets, does not). The detector is serve's pid still alive after the harness is
// gone; its control is the mutant harness-serve-orphaned (the same run without the signal),
// under which serve outlives it.
func TestKilledHarnessTakesItsServe(t *testing.T) {
	needDocker(t)
	pol := dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Reuse, dksec.Of(p).MaxSessions = "session", 2 })
	cmd := exec.Command(binPath, "harness", "--policy", pol, "-s", "sleep-past-timeout", "--max-timeout", "60s")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var srv int
	for deadline := time.Now().Add(30 * time.Second); srv == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the harness started no serve within 30s")
		}
		srv = childServe(cmd.Process.Pid)
	}
	defer func() { // an orphan (the control) ended as serve should be: SIGTERM removes its containers
		syscall.Kill(srv, syscall.SIGTERM)
		for end := time.Now().Add(20 * time.Second); alive(srv) && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
		}
		syscall.Kill(srv, syscall.SIGKILL)
	}()
	time.Sleep(500 * time.Millisecond) // serve past its start, its call running
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(15 * time.Second); alive(srv); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("serve (pid %d) still runs 15s after its harness was killed", srv)
		}
	}
	// and it ended as SIGTERM ends it, its containers removed, though its stderr's reader (the
	// harness) was gone when it logged its end (mutant serve-dies-on-broken-pipe: SIGPIPE killed
	// it there and its session's container stayed)
	out, err := exec.Command("docker", "ps", "-aq", "--filter", "label=dev.mcpsandbox.pid="+strconv.Itoa(srv)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if ids := strings.Fields(string(out)); len(ids) > 0 {
		exec.Command("docker", append([]string{"rm", "-f"}, ids...)...).Run()
		t.Errorf("serve (pid %d) left its containers %v behind: it did not end as SIGTERM ends it", srv, ids)
	}
}

// childServe is the pid of pid's child running `serve --http`, or 0.
func childServe(pid int) int {
	tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			argv, _ := os.ReadFile("/proc/" + c + "/cmdline")
			if strings.Contains(string(argv), "\x00serve\x00") && strings.Contains(string(argv), "\x00--http\x00") {
				n, _ := strconv.Atoi(c)
				return n
			}
		}
	}
	return 0
}

// alive: the process exists and is not a zombie waiting to be reaped.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
