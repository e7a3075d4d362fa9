package sandbox

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/volume"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
)

// plant creates (never starts) a container labelled as if an instance had started it.
func plant(t *testing.T, eng *engine.Client, o instance) string {
	t.Helper()
	l := o.labels()
	l[LabelCall] = "planted-" + randHex(4)
	cr, err := eng.API.ContainerCreate(context.Background(), &container.Config{Image: testImage(), Cmd: []string{"true"}, Labels: l},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		eng.API.ContainerRemove(context.Background(), cr.ID, container.RemoveOptions{Force: true})
	})
	return cr.ID
}

func exists(t *testing.T, eng *engine.Client, id string) bool {
	_, err := eng.API.ContainerInspect(context.Background(), id)
	return err == nil
}

// On start, serve removes the containers of instances that are provably dead, and only those.
func TestReaper(t *testing.T) {
	eng := needEngine(t)
	me := self()
	// Dead: a process that has exited; a pid now held by another process (start time differs).
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	exited := me
	exited.PID, exited.Start = cmd.Process.Pid, 12345
	reused := me
	reused.PID = os.Getppid()
	st, err := startTime(reused.PID)
	if err != nil {
		t.Fatal(err)
	}
	reused.Start = st + 1
	// Alive: another running serve (played by a live child process, with its real start time).
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { live.Process.Kill(); live.Wait() }()
	alive := me
	alive.PID = live.Process.Pid
	if alive.Start, err = startTime(alive.PID); err != nil {
		t.Fatal(err)
	}
	// Unknown: another machine sharing the engine, another pid namespace.
	far := exited
	far.Host, far.Machine = "elsewhere", "other-machine"
	ns := exited
	ns.PIDNS = "pid:[1]"

	deadIDs := []string{plant(t, eng, exited), plant(t, eng, reused)}
	t.Logf("dead %.12s %.12s", deadIDs[0], deadIDs[1])
	keepIDs := []string{plant(t, eng, alive), plant(t, eng, far), plant(t, eng, ns)}
	// A container that is not ours at all.
	cr, err := eng.API.ContainerCreate(context.Background(), &container.Config{Image: testImage(), Cmd: []string{"true"}, Labels: map[string]string{"other": "1"}}, nil, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	defer eng.API.ContainerRemove(context.Background(), cr.ID, container.RemoveOptions{Force: true})
	keepIDs = append(keepIDs, cr.ID)

	newExec(t, eng, testPolicy())
	for _, id := range deadIDs {
		if exists(t, eng, id) {
			t.Errorf("container %.12s of a dead instance survived the reaper", id)
		}
	}
	for i, id := range keepIDs {
		if !exists(t, eng, id) {
			t.Errorf("container %d (%.12s) was removed though its instance is alive or not ours to judge", i, id)
		}
	}
}

// A serve that is closed at once (its client's stdin closed before anything happened) still
// removes what dead instances left: start-up reaping is not cancelled by Close, and Close waits
// for it.
func TestReaperFinishesWhenClosedAtOnce(t *testing.T) {
	eng := needEngine(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := self()
	dead.PID, dead.Start = cmd.Process.Pid, 12345
	id := plant(t, eng, dead)
	if !exists(t, eng, id) {
		t.Fatal("the planted container is not there")
	}
	e, err := New(testPolicy(), Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(t, eng, id) {
		t.Errorf("container %.12s of a dead instance survived a serve closed at once", id)
	}
}

// A volume a dead instance labelled (a writable workspace's overlay whose container was never
// made, or went without it) is removed at start; one of a live instance, or not ours, is kept.
// Red with mutant docker-reaper-volumes.
func TestReaperRemovesVolumes(t *testing.T) {
	eng := needEngine(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := self()
	dead.PID, dead.Start = cmd.Process.Pid, 12345
	alive := self()
	mk := func(l map[string]string) string {
		v, err := eng.API.VolumeCreate(context.Background(), volume.CreateOptions{Labels: l})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { eng.API.VolumeRemove(context.Background(), v.Name, true) })
		return v.Name
	}
	gone := mk(dead.labels())
	kept := []string{mk(alive.labels()), mk(map[string]string{"other": "1"})}
	newExec(t, eng, testPolicy())
	has := func(name string) bool { _, err := eng.API.VolumeInspect(context.Background(), name); return err == nil }
	if has(gone) {
		t.Errorf("the volume %.12s of a dead instance survived the reaper", gone)
	}
	for _, name := range kept {
		if !has(name) {
			t.Errorf("the volume %.12s was removed though its instance is alive or not ours", name)
		}
	}
}
