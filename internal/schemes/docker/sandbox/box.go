package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// engineOpTimeout bounds one engine request made on behalf of a call or the pool. Engine
// requests never take the call's context: a create cancelled half-way may still create the
// container, so requests run to completion and what they made is removed afterwards.
const engineOpTimeout = 60 * time.Second

// box is one container, created, attached and started: its interpreter is blocked reading
// the program from the attached stdin. It serves exactly one call.
type box struct {
	id     string
	callID string
	nonce  string
	pooled bool
	hj     types.HijackedResponse
	eg     *boxEgress // its own egress proxy (docker.network host lists), removed with it
	// layer is its workspace layer (wsmount.go): discarded after the container's removal unless
	// a call claimed it; gone closes when the removal ended, removeErr says if it failed.
	layer       *wslayer.Layer
	claimed     atomic.Bool
	dropOnce    sync.Once
	quotaKilled atomic.Bool
	gone        chan struct{}
	removeErr   error
	made        time.Time
	rro         bool   // its read-only bind asked for recursive read-only (roBind)
	pid1        string // "prctl", "copy" (out of the program's reach) or "reachable (why)": awaitReady
	pathNote    string // the image's PATH entries the entrypoint skipped, and why (pathNoteOf)
	at          boxTimes
}

// boxTimes are when each step of a box's start ended (made is its start): where a cold call's
// time goes (BenchmarkColdPhases).
type boxTimes struct {
	created, attached, started time.Time
	pid1, ready                time.Time // the wrapper's pid1 line, its ready line
}

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on supported platforms
	}
	return hex.EncodeToString(b)
}

// newBox creates, attaches and starts a container. Whatever fails, nothing is left behind:
// a container that was created is removed before the error returns. An engine that cannot
// mount the workspace's layer gets the plain bind mount from then on (layerMountFailed).
func (e *Executor) newBox(pooled bool) (*box, error) {
	b, err := e.startBox(pooled)
	if e.layerMountFailed(b, err) || e.rroFailed(b, err) {
		return e.startBox(pooled)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (e *Executor) startBox(pooled bool) (*box, error) {
	b := &box{callID: randHex(8), nonce: randHex(16), pooled: pooled, gone: make(chan struct{}), made: time.Now()}
	labels := e.me.labels()
	labels[LabelCall] = b.callID
	labels[LabelPolicy] = e.spec.policy
	if pooled {
		labels[LabelPooled] = "1"
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, errors.New("serve is shutting down")
	}
	e.creating.Add(1)
	e.mu.Unlock()
	s, err := e.boxSpec(b, "mcpsandbox-"+b.callID)
	if err != nil {
		e.creating.Done()
		return nil, err
	}
	cfg, hc := s.build(b.nonce, labels, pooled)
	// The create is not cancelled by Close: cancelling only the client's side lets the engine
	// finish a container nobody removes. It is bounded, and removed at once if serve closed.
	cctx, ccancel := context.WithTimeout(context.WithoutCancel(e.life), engineOpTimeout)
	cr, err := e.eng.API.ContainerCreate(cctx, cfg, hc, nil, nil, "mcpsandbox-"+b.callID)
	ccancel()
	if err != nil {
		b.eg.close()
		b.removed()
		e.creating.Done()
		return nil, fmt.Errorf("create a container from %s: %w", e.spec.image, e.eng.Unreachable(err))
	}
	b.id, b.at.created = cr.ID, time.Now()
	e.tracked.Add(1)
	if e.life.Err() != nil {
		e.destroy(b)
		e.holdStarting(b)
		e.creating.Done()
		return nil, errors.New("serve is shutting down")
	}
	e.creating.Done()
	ctx, cancel := context.WithTimeout(e.life, engineOpTimeout)
	defer cancel()
	// Attach before start, so no byte of output can be missed.
	b.hj, err = e.eng.API.ContainerAttach(ctx, b.id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		e.destroy(b)
		e.holdStarting(b)
		return nil, fmt.Errorf("attach to container %.12s: %w", b.id, e.eng.Unreachable(err))
	}
	b.at.attached = time.Now()
	if err := e.eng.API.ContainerStart(ctx, b.id, container.StartOptions{}); err != nil {
		e.destroy(b)
		e.holdStarting(b)
		return b, fmt.Errorf("start container %.12s (image %s): %w", b.id, e.spec.image, e.eng.Unreachable(err))
	}
	b.at.started = time.Now()
	if err := b.awaitReady(engineOpTimeout); err != nil {
		e.destroy(b)
		e.holdStarting(b)
		return nil, fmt.Errorf("container %.12s (image %s): %w", b.id, e.spec.image, err)
	}
	e.notePid1(b.pid1)
	e.notePath(b.pathNote)
	return b, nil
}

// boxSpec is the spec of b's container: the executor's, plus (docker.network host lists) the
// socket directory of the container's own proxy, which b keeps until destroy.
func (e *Executor) boxSpec(b *box, name string) (spec, error) {
	s := e.spec
	s.rro = s.rro && e.rroOff.Load() == nil
	b.rro = s.rro && (s.workspace != "" && !s.wsWrite || s.egress)
	if err := e.attachLayer(b, &s); err != nil {
		return s, err
	}
	if e.egress == nil {
		return s, nil
	}
	eg, err := e.egress.open(b.callID, name)
	if err != nil {
		b.removed()
		return s, err
	}
	b.eg, s.egressDir = eg, eg.dir
	return s, nil
}

// awaitReady reads the attach stream until the wrapper says its interpreter is blocked on
// stdin. Nothing else comes before that line; what does (an image without /bin/sh, a crash)
// is the error.
// The Python wrapper says how pid 1 stands to the program ("mcpsandbox-pid1:…", watchdogPy) on the
// line just before its ready line, in the same write: b.pid1 is that text, or why there is none.
// Only that line counts: one written earlier came from something else (atk47b F1: a sitecustomize
// that ran in the wrapper wrote "mcpsandbox-pid1:prctl" where pid 1 was reachable).
func (b *box) awaitReady(limit time.Duration) error {
	got, err := b.readUntil("mcpsandbox-ready:"+b.nonce+"\n", limit)
	b.at.ready = time.Now()
	b.pid1 = pid1Report(got, b.nonce)
	b.pathNote = pathNoteOf(got, b.nonce)
	return err
}

// pathNoteOf is what the wrapper said (before its ready line, "mcpsandbox-path:…") the entrypoint
// skipped of the image's PATH when it chose the interpreter for pid 1 and the wrapper: relative
// entries, directories under a mount (the workspace's), links to files not the image's. Nothing of
// a call's runs before the ready line, so the last such line there is the entrypoint's.
func pathNoteOf(got []byte, nonce string) string {
	const tag = "mcpsandbox-path:"
	before, _, _ := bytes.Cut(got, []byte("mcpsandbox-ready:"+nonce+"\n"))
	note := ""
	for _, l := range strings.Split(string(before), "\n") {
		if v, ok := strings.CutPrefix(l, tag); ok {
			note = v
		}
	}
	return note
}

// pid1Report is the wrapper's report in what came before (and with) its ready line.
func pid1Report(got []byte, nonce string) string {
	const tag = "mcpsandbox-pid1:"
	before, _, _ := bytes.Cut(got, []byte("mcpsandbox-ready:"+nonce+"\n"))
	if mutated("docker-pid1-first-line") {
		if _, rest, ok := bytes.Cut(got, []byte(tag)); ok {
			s, _, _ := strings.Cut(string(rest), "\n")
			return s
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(before), "\n"), "\n")
	if last, ok := strings.CutPrefix(lines[len(lines)-1], tag); ok {
		return last
	}
	if bytes.Contains(before, []byte(tag)) {
		return "reachable (a report came, but not on the line just before the wrapper's ready line: something ran in the wrapper before it)"
	}
	return "reachable (no python3 in the image: the shell wrapper runs as the program's uid, with no watchdog)"
}

// awaitLine reads the attach stream until line (what comes before it is the error's text).
func (b *box) awaitLine(line string, limit time.Duration) error {
	_, err := b.readUntil(line, limit)
	return err
}

// readUntil is awaitLine, returning what it read.
func (b *box) readUntil(line string, limit time.Duration) ([]byte, error) {
	b.hj.Conn.SetReadDeadline(time.Now().Add(limit))
	defer b.hj.Conn.SetReadDeadline(time.Time{})
	want := []byte(line)
	var got []byte
	hdr := make([]byte, 8)
	for !bytes.Contains(got, want) {
		if _, err := io.ReadFull(b.hj.Reader, hdr); err != nil {
			return got, fmt.Errorf("its interpreter did not start (%v): %q", err, truncate(got, 2048))
		}
		n := binary.BigEndian.Uint32(hdr[4:])
		if len(got)+int(n) > 64<<10 {
			return got, fmt.Errorf("it wrote more than 64 KiB before its interpreter started: %q", truncate(got, 2048))
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(b.hj.Reader, buf); err != nil {
			return got, fmt.Errorf("its interpreter did not start (%v): %q", err, truncate(append(got, buf...), 2048))
		}
		got = append(got, buf...)
		if b.at.pid1.IsZero() && bytes.Contains(got, []byte("mcpsandbox-pid1:")) {
			b.at.pid1 = time.Now()
		}
	}
	return got, nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// destroy removes the container off the caller's path (kill and remove in one engine call).
// Removal is retried while serve lives; Close waits for every removal to finish.
func (e *Executor) destroy(b *box) {
	if b.hj.Conn != nil {
		b.hj.Close()
	}
	e.mu.Lock()
	closed := e.closed
	if !closed {
		e.bg.Add(1)
	}
	e.mu.Unlock()
	remove := func() {
		defer b.removed()
		defer e.tracked.Add(-1)
		defer b.eg.close() // its proxy, tunnels and socket directory go with it
		if e.oom != nil {
			defer e.oom.forget(b.id)
		}
		e.removeSem <- struct{}{}
		defer func() { <-e.removeSem }()
		for try := 0; try < 3; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), engineOpTimeout)
			err := e.eng.API.ContainerRemove(ctx, b.id, container.RemoveOptions{Force: true, RemoveVolumes: true})
			cancel()
			if err == nil || isNotFound(err) {
				return
			}
			e.log.Warn("removing a container failed; retrying", "container", b.id[:12], "err", err)
			time.Sleep(time.Duration(try+1) * 200 * time.Millisecond)
		}
		e.log.Error("could not remove a container; the next serve removes it, or: docker rm -f "+b.id[:12], "container", b.id[:12])
		b.removeErr = errors.New("the engine did not remove it after 3 tries")
	}
	if closed { // Close is waiting for nothing more: remove before returning
		remove()
		return
	}
	go func() {
		defer e.bg.Done()
		remove()
	}()
}

// errDelivery means the program never reached the container: a pooled box whose container
// died meanwhile; the call may retry on a fresh one.
var errDelivery = errors.New("delivering the program to the container failed")

// run delivers the program, reads its output until the end mark (or the container's exit),
// and destroys the box afterwards, off the call's path, on every path out.
//
// The timeout clock starts at delivery; hardStop (if not zero) bounds the call whatever the
// clock says, so a slow container start can delay the end by little.
func (e *Executor) run(ctx context.Context, b *box, kind, src string, timeout time.Duration, hardStop time.Time, maxOut int) (*executor.Result, error) {
	defer e.destroy(b)
	if !hardStop.IsZero() {
		timeout = min(timeout, time.Until(hardStop))
	}
	c := e.readOutput(b, maxOut)
	// Deliver in the background: a program larger than the socket's buffer must not hold the
	// timeout off.
	delivered := make(chan error, 1)
	// stdin stays open for the whole call: the container's watchdog kills everything when it
	// closes (serve finished with the call, or died).
	go func() {
		_, err := io.WriteString(b.hj.Conn, fmt.Sprintf("%s %d %d\n%s", kind, timeout.Milliseconds(), len(src), src))
		delivered <- err
	}()
	timer := time.NewTimer(timeout) // the timeout clock starts at delivery
	defer timer.Stop()

	res := c.res
	defer func() {
		e.log.Debug("call ended", "container", b.id[:12], "pooled", b.pooled, "ms", float64(time.Since(c.start).Microseconds())/1000,
			"first_byte_ms", float64(c.firstByte.Load()/1000)/1000,
			"timed_out", res.TimedOut, "exit", res.ExitCode)
	}()
	marks := 0
	for {
		select {
		case err := <-delivered:
			if err != nil {
				b.hj.Close()
				<-c.streamEnd
				return nil, fmt.Errorf("%w: %v", errDelivery, err)
			}
			delivered = nil
		case <-c.marked:
			if marks++; marks < 2 {
				continue
			}
			_, st, oom := c.errMark.result()
			res.ExitCode = st
			c.oomKilled = e.markOOM(b.id, oom)
			return c.finish(), nil
		case <-c.streamEnd:
			c.streamEnd <- nil // let finish read it
			return e.streamsEnded(ctx, c, timer.C, hardStop)
		case <-timer.C:
			res.TimedOut, res.ExitCode = true, 137
			return c.finish(), nil
		case <-ctx.Done():
			return e.ctxDone(ctx, res, c.finish)
		}
	}
}

// boxCall is one call's output side: the capped streams, the end marks found in them, the
// copier's end, and what the result's note will say.
type boxCall struct {
	e              *Executor
	b              *box
	stdout, stderr *executor.CapBuffer
	marked         chan struct{}
	errMark        *markWriter
	pictures       *dataTap // the pictures' records on stdout (frames.go)
	streamEnd      chan error
	start          time.Time
	firstByte      atomic.Int64 // ns after start, for the debug log
	res            *executor.Result
	oomKilled      bool
	// stoppedFromOutside is why a container ended by a signal serve did not send.
	stoppedFromOutside string
}

// readOutput starts copying the box's output streams into capped buffers, watching each for the
// end mark.
func (e *Executor) readOutput(b *box, maxOut int) *boxCall {
	c := &boxCall{e: e, b: b, stdout: &executor.CapBuffer{Limit: maxOut}, stderr: &executor.CapBuffer{Limit: maxOut},
		marked: make(chan struct{}, 2), streamEnd: make(chan error, 1), start: time.Now(), res: &executor.Result{}}
	onMark := func() { c.marked <- struct{}{} }
	outMark := newMarkWriter(c.stdout, b.nonce, onMark)
	c.errMark = newMarkWriter(c.stderr, b.nonce, onMark)
	c.pictures = newDataTap(outMark, b.nonce, imageBudget)
	first := func(w io.Writer) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			c.firstByte.CompareAndSwap(0, int64(time.Since(c.start)))
			return w.Write(p)
		})
	}
	go func() {
		_, err := stdcopy.StdCopy(first(c.pictures), first(c.errMark), b.hj.Reader)
		c.pictures.flush()
		outMark.flush()
		c.errMark.flush()
		c.streamEnd <- err
	}()
	return c
}

// finish ends the output side and fills the result: the streams, a note on how the container
// was stopped, truncation, duration.
func (c *boxCall) finish() *executor.Result {
	res := c.res
	c.b.hj.Close() // ends StdCopy
	<-c.streamEnd
	res.Stdout, res.Stderr = c.stdout.String(), c.stderr.String()
	note := c.stoppedFromOutside
	if c.oomKilled {
		note = fmt.Sprintf("killed: out of memory (limits.memory = %s)", c.e.memText)
	}
	if note != "" {
		if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
			res.Stderr += "\n"
		}
		res.Stderr += "[mcpsandbox: " + note + "]\n"
	}
	res.Truncated = c.stdout.Dropped() > 0 || c.stderr.Dropped() > 0
	res.DurationMS = time.Since(c.start).Milliseconds()
	addImages(res, c.pictures)
	return res
}

// streamsEnded: the container's streams ended without both marks: the wrapper died (os._exit,
// out of memory, killed). The status mark, if it came, decides; else the engine's exit status.
func (e *Executor) streamsEnded(ctx context.Context, c *boxCall, timeout <-chan time.Time, hardStop time.Time) (*executor.Result, error) {
	res := c.res
	if found, st, oom := c.errMark.result(); found {
		res.ExitCode = st
		c.oomKilled = e.markOOM(c.b.id, oom)
		return c.finish(), nil
	}
	code, oom, err := e.exitStatus(ctx, c.b, timeout, hardStop)
	switch {
	case errors.Is(err, errTimedOut):
		res.TimedOut, res.ExitCode = true, 137
	case err != nil && ctx.Err() != nil:
		return e.ctxDone(ctx, res, c.finish)
	case err != nil:
		return nil, err
	default:
		res.ExitCode, c.oomKilled = code, oom
		if !oom && (code == 128+15 || code == 128+9) {
			c.stoppedFromOutside = e.outsideStop(code)
			if c.b.quotaKilled.Load() {
				c.stoppedFromOutside = e.quotaNote()
			}
		} else if code == 2 && e.spec.gvisor {
			c.stoppedFromOutside = e.gvisorEnded()
		}
	}
	return c.finish(), nil
}

// ctxDone ends a call whose context ended: serve's deadline is a timeout, anything else
// (the client cancelled or went away, serve is stopping) is the context's error.
func (e *Executor) ctxDone(ctx context.Context, res *executor.Result, finish func() *executor.Result) (*executor.Result, error) {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.TimedOut, res.ExitCode = true, 137
		return finish(), nil
	}
	finish()
	return nil, ctx.Err()
}

var errTimedOut = errors.New("timed out")

// inspectFloor is the least time exitStatus gives the engine to say how a container ended.
const inspectFloor = 300 * time.Millisecond

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// exitStatus waits for the container to stop and asks the engine how: exit code, and whether
// the kernel killed it for memory. The question is bounded by the call's hard stop (if any,
// and at least inspectFloor): a slow engine delays the answer, never past the call's bound.
func (e *Executor) exitStatus(ctx context.Context, b *box, timeout <-chan time.Time, hardStop time.Time) (int, bool, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	okc, errc := e.eng.API.ContainerWait(wctx, b.id, container.WaitConditionNotRunning)
	var code int
	select {
	case r := <-okc:
		code = int(r.StatusCode)
	case err := <-errc:
		return 0, false, fmt.Errorf("waiting for container %.12s: %w", b.id, e.eng.Unreachable(err))
	case <-timeout:
		return 0, false, errTimedOut
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
	limit := 10 * time.Second
	if !hardStop.IsZero() {
		limit = min(limit, max(time.Until(hardStop), inspectFloor))
	}
	ictx, icancel := context.WithTimeout(context.Background(), limit)
	defer icancel()
	ins, err := e.eng.API.ContainerInspect(ictx, b.id)
	if err == nil && ins.State != nil && ins.State.OOMKilled {
		return code, true, nil
	}
	// The engine's flag can miss it (see oomWatch); a SIGKILL with the memory limit's event is OOM.
	return code, code == 137 && e.oom != nil && e.oom.killed(b.id, 500*time.Millisecond), nil
}

// outsideStop says who ended a container with a signal serve never sends mid-call (serve's own
// timeout and cancel end the call before the container): the engine going away, or someone
// running docker stop / docker kill. A bare exit 143 told the user nothing.
func (e *Executor) outsideStop(code int) string {
	sig := map[int]string{128 + 15: "SIGTERM", 128 + 9: "SIGKILL"}[code]
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := e.eng.API.Ping(ctx); err != nil {
		return fmt.Sprintf("the docker engine stopped during the call (the container got %s); start it again (e.g. `sudo systemctl start docker`) and retry", sig)
	}
	return fmt.Sprintf("the container was stopped from outside the sandbox during the call (%s: docker stop/kill, or the engine restarting)", sig)
}

// gvisorEnded explains a gVisor sandbox that ended with status 2 and without the program's
// result: that is how runsc's Sentry dies when it cannot start a host thread, i.e. when the
// program's processes reached the pids limit (see spec.hostPids). A program that exits 2
// without the end mark (os._exit(2)) gets the same words, hence "most likely".
func (e *Executor) gvisorEnded() string {
	return fmt.Sprintf("the gVisor sandbox (runsc) ended abruptly (status 2, no result from the program): most likely its processes "+
		"reached limits.pids = %d, which under gVisor ends the whole sandbox (the engine counts gVisor's own host tasks: %d here)",
		e.spec.pids, e.spec.hostPids())
}

// notePid1 keeps the worst a container said of its pid 1 (awaitReady) and says on serve's log,
// once per change, when the program can reach it: there the watchdog that ends a container when
// serve dies can be held off through /proc (README, Known gaps). The policy's image and runtime
// decide it mostly, but not alone (the workspace's content did, atk47b F1), so a later container
// that says reachable where the first did not replaces the first's word (atk47b F3): the log,
// Pid1() and --check's init layer say it. A later "prctl" or "copy" never hides an earlier
// reachable one.
func (e *Executor) notePid1(s string) {
	if s == "" {
		return
	}
	reach := strings.HasPrefix(s, "reachable")
	var was string
	for {
		old := e.pid1.Load()
		if old != nil && (!reach || strings.HasPrefix(*old, "reachable") || mutated("docker-pid1-first-only")) {
			return
		}
		if e.pid1.CompareAndSwap(old, &s) {
			if old != nil {
				was = *old
			}
			break
		}
	}
	if reach && was != "" {
		e.log.Warn("docker: a later container's watchdog (its pid 1, which ends it when serve dies) is within the program's reach through /proc, where the first containers' was not: something a call left (the workspace's content) can change it; a program can keep a container running after serve dies, until its timeout (a session's: until the next serve); see README, Known gaps", "pid1", s, "before", was)
	} else if reach {
		e.log.Warn("docker: the watchdog (the container's pid 1, which ends it when serve dies) is within the program's reach through /proc in this image or runtime: a program can keep a container running after serve dies, until its timeout (a session's: until the next serve); give the image Python's ctypes, or see README, Known gaps", "pid1", s)
	}
}

// notePath says on serve's log, once, that the image's PATH names a place a call can write (the
// workspace, or a relative entry: the working directory is the workspace) or a link out of the
// image's files, which the entrypoint skipped when it chose the interpreter for pid 1 and the
// wrapper (atk48b F1: a python3 a call wrote there ran as pid 1). The program's PATH is unchanged:
// what it runs by name may still be the workspace's, as under the image's own python3 -c.
func (e *Executor) notePath(s string) {
	if s == "" || !e.pathNote.CompareAndSwap(nil, &s) {
		return
	}
	e.log.Warn("docker: the image's PATH names directories a call can write, or relative ones (the working directory is the workspace): the interpreter for the container's watchdog (pid 1) and wrapper was taken from the image's own directories, skipping them; a program that runs python3 (or another command) by name still finds the workspace's first", "skipped", s)
}

// Pid1 says how the containers' pid 1 stands to the program: "prctl" or "copy" (out of its
// reach, by prctl(PR_SET_DUMPABLE) through ctypes or by a copy of the interpreter it cannot
// read), "reachable (why)", or "" before any container started.
func (e *Executor) Pid1() string {
	if p := e.pid1.Load(); p != nil {
		return *p
	}
	return ""
}

// pid1Layer is the init layer as the containers' pid 1 says it stands to the program (notePid1):
// the engine's record shows the watchdog first, not whether the program can reach it through
// /proc, which the image and the runtime decide. Before any container has said, one is started
// for it (--check: the layers are measured, not assumed).
func (e *Executor) pid1Layer(ls []executor.Layer) []executor.Layer {
	i := slices.IndexFunc(ls, func(l executor.Layer) bool { return l.Name == LayerInit })
	if i < 0 || !ls[i].Active || e.readyErr != nil {
		return ls
	}
	if e.Pid1() == "" {
		if b, err := e.newBox(false); err == nil {
			e.destroy(b)
			<-b.gone
		}
	}
	out := append([]executor.Layer(nil), ls...)
	switch p := e.Pid1(); {
	case p == "":
		out[i].Detail += "; whether the program can reach it through /proc is not known: no container started (see serve's log)"
	case strings.HasPrefix(p, "reachable") && !mutated("docker-pid1-reach-unsaid"):
		out[i].Active, out[i].Off = false, executor.OffUnavailable
		out[i].Detail = "the watchdog is the container's pid 1, but the program can reach it through /proc: " + p +
			"; a program can hold a container running after serve dies, until its timeout (a session's: until the next serve). Give the image Python's ctypes (the official python images have it), or see README, Known gaps"
	default:
		out[i].Detail += "; out of the program's reach through /proc (non-dumpable by " + map[string]string{"prctl": "prctl through ctypes", "copy": "a copy of its interpreter the program cannot read"}[p] + ", measured in a container)"
	}
	return out
}
