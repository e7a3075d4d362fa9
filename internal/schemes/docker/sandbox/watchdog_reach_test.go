package sandbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
)

// The watchdog that ends a container when serve dies is out of the program's way: the program
// kills every process it can without ending its own container (atk39 F7 killed the watchdog,
// then serve was SIGKILLed and the container ran on past its timeout), the attached stdin is
// closed as the engine closes it when serve dies, and the container is gone within seconds.
func TestWatchdogOutOfProgramReach(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	b := &box{callID: "wd-" + randHex(4), nonce: randHex(16)}
	labels := e.me.labels()
	labels[LabelCall] = b.callID
	cfg, hc := e.spec.build(b.nonce, labels, false)
	ctx := context.Background()
	cr, err := eng.API.ContainerCreate(ctx, cfg, hc, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.API.ContainerRemove(context.Background(), cr.ID, container.RemoveOptions{Force: true}) })
	if b.hj, err = eng.API.ContainerAttach(ctx, cr.ID, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true}); err != nil {
		t.Fatal(err)
	}
	if err := eng.API.ContainerStart(ctx, cr.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.awaitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	// Kill every process but pid 1, this shell's ancestors (killing one ends the container: what
	// the program wants is one that runs on) and itself; leave a loop that ignores HUP and TERM.
	script := `(trap '' HUP TERM INT; while :; do sleep 1; done) &
keep=" 1 $$ $! "; p=$$
while [ "$p" -gt 1 ]; do p=$(awk '/^PPid:/{print $2}' /proc/$p/status); keep="$keep$p "; done
for d in /proc/[0-9]*; do q=${d#/proc/}; case "$keep" in *" $q "*) ;; *) kill -9 "$q" 2>/dev/null && echo "killed $q";; esac; done
echo done-killing
sleep 300`
	fmt.Fprintf(b.hj.Conn, "shell 120000 %d\n%s", len(script), script)
	if err := b.awaitLine("done-killing\n", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	b.hj.Close() // what the engine does when serve dies
	deadline := time.Now().Add(15 * time.Second)
	for {
		ins, err := eng.API.ContainerInspect(ctx, cr.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !ins.State.Running {
			return
		}
		if time.Now().After(deadline) {
			top, _ := eng.API.ContainerTop(ctx, cr.ID, nil)
			t.Fatalf("the container runs on 15 s after its attached stdin closed (its timeout: 120 s): %v", top.Processes)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
