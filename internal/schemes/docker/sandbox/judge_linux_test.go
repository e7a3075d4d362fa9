package sandbox

import (
	"os"
	"os/exec"

	"github.com/mcpsandbox/mcpsandbox/internal/procid"
	"testing"
)

func TestJudgeLinux(t *testing.T) {
	me := self()
	if me.Boot == "" || me.PIDNS == "" || me.Start == 0 {
		t.Fatalf("self() = %+v: no boot id, pid namespace or start time", me)
	}
	// A process that has exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := me
	gone.PID, gone.Start = cmd.Process.Pid, 1
	// A live process: the test's parent (go test), with its real start time, and with a wrong one.
	ppid := os.Getppid()
	st, err := startTime(ppid)
	if err != nil {
		t.Fatal(err)
	}
	parent := me
	parent.PID, parent.Start = ppid, st
	reused := parent
	reused.Start = st + 1
	rebooted := parent
	rebooted.Boot = "another-boot"
	if err := procid.NoteBoot(rebooted.Boot); err != nil { // this machine ran it
		t.Fatal(err)
	}
	clone := parent
	clone.Boot = "a-boot-this-machine-never-ran" // a clone's, sharing the machine id (atk37b F5)
	for _, tc := range []struct {
		name string
		o    instance
		want liveness
	}{
		{"exited", gone, dead},
		{"alive", parent, alive},
		{"pid reused", reused, dead},
		{"before a reboot", rebooted, dead},
		{"a clone's boot", clone, unknown},
	} {
		if got := me.judge(tc.o); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
