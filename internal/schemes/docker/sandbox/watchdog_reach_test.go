package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// startWatched starts a per-call container as serve does (attached, started, ready) and returns
// its box, with its removal registered.
func startWatched(t *testing.T, e *Executor, api client.APIClient) (*box, string) {
	t.Helper()
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	b := &box{callID: "wd-" + randHex(4), nonce: randHex(16)}
	labels := e.me.labels()
	labels[LabelCall] = b.callID
	cfg, hc := e.spec.build(b.nonce, labels, false)
	ctx := context.Background()
	cr, err := api.ContainerCreate(ctx, cfg, hc, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.ContainerRemove(context.Background(), cr.ID, container.RemoveOptions{Force: true}) })
	if b.hj, err = api.ContainerAttach(ctx, cr.ID, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true}); err != nil {
		t.Fatal(err)
	}
	if err := api.ContainerStart(ctx, cr.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.awaitReady(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	e.notePid1(b.pid1)
	b.id = cr.ID
	return b, cr.ID
}

// endsSoon closes the box's attached stream, as the engine does when serve dies (even by
// SIGKILL), and wants the container stopped within 15 s (its timeout is far later).
func endsSoon(t *testing.T, api client.APIClient, b *box, id string) {
	t.Helper()
	b.hj.Close()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ins, err := api.ContainerInspect(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !ins.State.Running {
			return
		}
		if time.Now().After(deadline) {
			top, _ := api.ContainerTop(context.Background(), id, []string{"-o", "pid,stat,args"})
			t.Fatalf("the container runs on 15 s after its attached stdin closed (its timeout: 120 s): %v", top.Processes)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// attackThenClose runs script as a per-call container's program (timeout 120 s), waits for its
// line marker, then closes the stream as a dead serve's engine does: the container must end.
func attackThenClose(t *testing.T, script, marker string) {
	t.Helper()
	attackThenCloseIn(t, needEngine(t), testPolicy(), script, marker)
}

// attackThenCloseIn is attackThenClose under the policy p.
func attackThenCloseIn(t *testing.T, eng *engine.Client, p *policy.Policy, script, marker string) {
	t.Helper()
	e := newExec(t, eng, p)
	b, id := startWatched(t, e, eng.API)
	fmt.Fprintf(b.hj.Conn, "shell 120000 %d\n%s", len(script), script)
	if err := b.awaitLine(marker, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	// what the program did ends nothing by itself: the container runs its sleep
	time.Sleep(time.Second)
	if ins, err := eng.API.ContainerInspect(context.Background(), id); err != nil || !ins.State.Running {
		t.Fatalf("the container ended by the program's own doing, before its stream closed (%v)", err)
	}
	endsSoon(t, eng.API, b, id)
}

// The watchdog that ends a container when serve dies is out of the program's way: the program
// kills every process it can without ending its own container (atk39 F7 killed the watchdog,
// then serve was SIGKILLed and the container ran on past its timeout), the attached stdin is
// closed as the engine closes it when serve dies, and the container is gone within seconds.
func TestWatchdogOutOfProgramReach(t *testing.T) {
	// Kill every process but pid 1, this shell's ancestors (killing one ends the container: what
	// the program wants is one that runs on) and itself; leave a loop that ignores HUP and TERM.
	script := `(trap '' HUP TERM INT; while :; do sleep 1; done) &
keep=" 1 $$ $! "; p=$$
while [ "$p" -gt 1 ]; do p=$(awk '/^PPid:/{print $2}' /proc/$p/status); keep="$keep$p "; done
for d in /proc/[0-9]*; do q=${d#/proc/}; case "$keep" in *" $q "*) ;; *) kill -9 "$q" 2>/dev/null && echo "killed $q";; esac; done
echo done-killing
sleep 300`
	attackThenClose(t, script, "done-killing\n")
}

// Nor can the program stop it (atk39b F8): SIGSTOP is not a kill and cannot be caught, so a
// watchdog of the program's uid beside it (docker-init's child) was stopped, and a SIGKILLed
// serve's container ran on. As pid 1 the kernel discards it. The script stops every process
// whose command line is the watchdog's (its pattern built at run time: the script's own
// command line holds the script), pid 1 included, and sends pid 1 SIGINT and SIGTERM (Python's
// SIGINT handler ended the container at once: atk44c F3, mutant docker-watchdog-sigint), then leaves a loop that ignores HUP
// and TERM; the container must still end when its stdin closes.
func TestWatchdogCannotBeStopped(t *testing.T) {
	script := `(trap '' HUP TERM INT; while :; do sleep 1; done) &
n=0; w=set_wake; w=${w}up_fd
for d in /proc/[0-9]*; do grep -q "$w" "$d/cmdline" 2>/dev/null && kill -STOP "${d#/proc/}" 2>/dev/null && n=$((n+1)); done
kill -STOP 1 2>/dev/null; kill -9 1 2>/dev/null; kill -INT 1 2>/dev/null; kill -TERM 1 2>/dev/null
echo "stopped $n"
echo done-stopping
sleep 300`
	attackThenClose(t, script, "done-stopping\n")
}

// A session's supervisor watches the attached stdin, and the watchdog leaves the stdin's data to
// it; but the supervisor is the program's uid, so the watchdog also watches the stdin's hang-up
// (atk39b F8, by reading: the session's form). A process a call leaves in the background stops
// every process it can, the supervisor, its interpreter and pid 1 included; the container must
// still end when its stdin closes.
func TestSessionWatchdogCannotBeStopped(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	b, id := startWatched(t, e, eng.API)
	if err := e.becomeSession(b); err != nil {
		t.Fatal(err)
	}
	script := `(trap '' HUP TERM INT
read -r me _ </proc/self/stat
sleep 1
for d in /proc/[0-9]*; do q=${d#/proc/}; [ "$q" = "$me" ] || kill -STOP "$q" 2>/dev/null; done
while :; do sleep 1; done) >/dev/null 2>&1 </dev/null &
echo call-done`
	fmt.Fprintf(b.hj.Conn, "call shell %s 0 %d\n%s", randHex(8), len(script), script)
	if err := b.awaitLine("call-done\n", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // the background process has stopped what it could
	top, _ := eng.API.ContainerTop(context.Background(), id, []string{"-o", "pid,stat,args"})
	stopped := 0
	for _, p := range top.Processes {
		if len(p) > 1 && len(p[1]) > 0 && p[1][0] == 'T' {
			stopped++
		}
	}
	if stopped == 0 { // the detector's own check: the attack ran
		t.Fatalf("the call's background process stopped nothing: %v", top.Processes)
	}
	endsSoon(t, eng.API, b, id)
}

// holdStdinPy is a program that opens for writing every process's fd 0 that is a pipe (the
// attached stdin, whose hang-up the watchdog and a session's supervisor wait for: a write end
// held keeps it from ever coming) and pid 1's memory read-write, says what it reached, and holds
// it all, ignoring HUP, TERM and INT (atk44c F1).
const holdStdinPy = `import os, glob, signal, stat, time
for s in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
    signal.signal(s, signal.SIG_IGN)
got, held = [], []
for p in ["/proc/1/fd/0", "/proc/1/mem"] + sorted(glob.glob("/proc/[0-9]*/fd/0")):
    try:
        fd = os.open(p, os.O_RDWR if p.endswith("/mem") else os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        continue
    if p.endswith("/mem") or stat.S_ISFIFO(os.fstat(fd).st_mode):
        got.append(p)
        held.append(fd)
print("REACHED " + " ".join(got) if got else "reached-nothing", flush=True)
while True:
    time.sleep(1)
`

// The watchdog and a session's supervisor are out of the program's reach through /proc too
// (atk44c F1): the program, the same uid, opened /proc/1/fd/0 for writing (a pipe's new write
// end: the attached stdin's hang-up never came when serve died) and /proc/1/mem read-write. Both
// are non-dumpable now: the program reaches neither, and the container ends when its stdin closes.
func TestWatchdogUnreachableThroughProc(t *testing.T) {
	script := "(python3 -c '" + holdStdinPy + "' </dev/null &)\nsleep 300"
	attackThenClose(t, script, "reached-nothing\n")
}

// The session's form: its supervisor reads the attached stdin, so its fd 0 was the other way
// in (/proc/<supervisor>/fd/0), and a session's watchdog keeps no timeout: the container ran on
// until the next serve removed it.
func TestSessionStdinUnreachableThroughProc(t *testing.T) {
	eng := needEngine(t)
	sessionHoldThenClose(t, eng, sessionPolicy())
}

// sessionHoldThenClose runs holdStdinPy in the background of a session's call under p, wants it
// to reach nothing, and the container to end when its stream closes.
func sessionHoldThenClose(t *testing.T, eng *engine.Client, p *policy.Policy) {
	t.Helper()
	e := newExec(t, eng, p)
	b, id := startWatched(t, e, eng.API)
	if err := e.becomeSession(b); err != nil {
		t.Fatal(err)
	}
	script := "python3 -c '" + holdStdinPy + "' </dev/null >/tmp/reach 2>&1 &\n" +
		"while [ ! -s /tmp/reach ]; do sleep 0.1; done; cat /tmp/reach"
	fmt.Fprintf(b.hj.Conn, "call shell %s 0 %d\n%s", randHex(8), len(script), script)
	if err := b.awaitLine("reached-nothing\n", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	endsSoon(t, eng.API, b, id)
}

// At the smallest memory limit a policy may set (16MiB) the interpreter's copy (6.8 MB) has no
// room beside the interpreters: it is not made, and a session's call runs (with the copy, every
// session call was killed for out of memory: atk45c F3).
func TestSessionRunsAtSmallestMemory(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { p.Limits.Memory = 16 << 20 }))
	for i := 0; i < 2; i++ {
		res := mustIn(t, e, "A", ToolPython, py(`print("ok")`))
		if got := strings.TrimSpace(res.Stdout); got != "ok" {
			t.Fatalf("call %d in a 16MiB session: stdout %q, exit %d, stderr %q", i, got, res.ExitCode, res.Stderr)
		}
	}
}
