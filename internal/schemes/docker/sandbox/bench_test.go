package sandbox

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// benchCalls runs b.N calls one after another and reports p50/p90 in ms.
func benchCalls(b *testing.B, e *Executor, name string, args map[string]any) {
	raw, _ := json.Marshal(args)
	tl := tool(e, name)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if e.pool != nil {
			// Measure the pooled path: wait (off the clock) until a container is ready.
			b.StopTimer()
			for len(e.pool.ready) == 0 {
				time.Sleep(time.Millisecond)
			}
			b.StartTimer()
		}
		t0 := time.Now()
		res, err := tl.Run(context.Background(), executor.Call{Args: raw, Timeout: 30 * time.Second, MaxOutput: 65536})
		ds = append(ds, time.Since(t0))
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
	}
	b.StopTimer()
	report(b, ds)
}

func report(b *testing.B, ds []time.Duration) {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(f float64) float64 { return float64(ds[int(f*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.9), "p90-ms")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkCallCold(b *testing.B) {
	eng := needEngine(b)
	e := newExec(b, eng, testPolicy())
	benchCalls(b, e, ToolPython, map[string]any{"code": "print('hi')"})
}

func BenchmarkCallPooled(b *testing.B) {
	eng := needEngine(b)
	e := newExec(b, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Pool = 4 }))
	benchCalls(b, e, ToolPython, map[string]any{"code": "print('hi')"})
}

func BenchmarkCallPooledShell(b *testing.B) {
	eng := needEngine(b)
	e := newExec(b, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Pool = 4 }))
	benchCalls(b, e, ToolShell, map[string]any{"script": "echo hi"})
}

// BenchmarkDockerRunCLI is the baseline: `docker run --rm` through the CLI with the same
// hardening flags, running the same program.
func BenchmarkDockerRunCLI(b *testing.B) {
	needEngine(b)
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("SKIP: no docker CLI for the baseline")
	}
	p := testPolicy()
	args := []string{"run", "--rm", "-i", "--network", "none", "--read-only", "--cap-drop", "ALL",
		"--security-opt", "no-new-privileges", "--user", "65534:65534", "--init",
		"--memory", strconv.FormatInt(int64(p.Limits.Memory), 10), "--memory-swap", strconv.FormatInt(int64(p.Limits.Memory), 10),
		"--pids-limit", strconv.Itoa(int(p.Limits.Pids)), "--cpus", strconv.FormatFloat(p.Limits.CPUs, 'f', -1, 64),
		"--tmpfs", "/tmp:rw,nosuid,nodev,size=67108864", "--ulimit", "nofile=1024", "--ulimit", "fsize=67108864",
		"--log-driver", "none", "--label", LabelApp + "=1", testImage(), "python3", "-c", "print('hi')"}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		out, err := exec.Command("docker", args...).CombinedOutput()
		ds = append(ds, time.Since(t0))
		if err != nil || string(out) != "hi\n" {
			b.Fatalf("%v %q", err, out)
		}
	}
	b.StopTimer()
	report(b, ds)
}

// BenchmarkAttachEchoFloor is the transport's floor on this machine, now: one running
// container echoing (cat) over the attach stream; each op writes a line and reads it back.
// A pooled call cannot beat it (its program's output crosses the same path), so pooled/floor
// is what serve and the wrapper add.
func BenchmarkAttachEchoFloor(b *testing.B) {
	eng := needEngine(b)
	ctx := context.Background()
	cfg, hc := newSpec(testPolicy()).build("n", map[string]string{LabelApp: "1", LabelCall: "bench-floor"}, false)
	cfg.Entrypoint, cfg.Cmd, cfg.StdinOnce = []string{"cat"}, nil, false
	cr, err := eng.API.ContainerCreate(ctx, cfg, hc, nil, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	defer eng.API.ContainerRemove(ctx, cr.ID, container.RemoveOptions{Force: true})
	hj, err := eng.API.ContainerAttach(ctx, cr.ID, container.AttachOptions{Stream: true, Stdin: true, Stdout: true})
	if err != nil {
		b.Fatal(err)
	}
	defer hj.Close()
	if err := eng.API.ContainerStart(ctx, cr.ID, container.StartOptions{}); err != nil {
		b.Fatal(err)
	}
	hdr := make([]byte, 8)
	body := make([]byte, 64)
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := hj.Conn.Write([]byte("x\n")); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(hj.Reader, hdr); err != nil { // stdcopy frame header
			b.Fatal(err)
		}
		if _, err := io.ReadFull(hj.Reader, body[:binary.BigEndian.Uint32(hdr[4:])]); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	b.StopTimer()
	report(b, ds)
}

func BenchmarkCallPooledCPU2(b *testing.B) {
	eng := needEngine(b)
	e := newExec(b, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Pool = 4; p.Limits.CPUs = 2 }))
	benchCalls(b, e, ToolPython, map[string]any{"code": "print('hi')"})
}

// BenchmarkPooledThroughput: calls per second at concurrency 1, 4 and 8 with pool = 8 (each
// container still serves one call; refills run in the background).
func BenchmarkPooledThroughput(b *testing.B) {
	eng := needEngine(b)
	e := newExec(b, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Pool = 8 }))
	raw, _ := json.Marshal(map[string]any{"code": "print('hi')"})
	tl := tool(e, ToolPython)
	for _, conc := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("conc=%d", conc), func(b *testing.B) {
			for len(e.pool.ready) < 8 {
				time.Sleep(10 * time.Millisecond)
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			t0 := time.Now()
			b.ResetTimer()
			for range conc {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for next.Add(1) <= int64(b.N) {
						res, err := tl.Run(context.Background(), executor.Call{Args: raw, Timeout: 30 * time.Second, MaxOutput: 65536})
						if err != nil || res.ExitCode != 0 {
							b.Errorf("%v %+v", err, res)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "calls/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkColdPhases is where a cold call's time goes, each step's p50 in ms: the engine's
// create, attach and start; the container's first line (pid 1's interpreter started, prctl or
// the copy, the fork probe of /proc/1: "pid1"); the wrapper's ready line after it; the call
// itself (delivery to the end mark: the program's run in the wrapper's interpreter). The previous
// container's removal runs beside the next call's start, as it does in serve. The test image's
// Python has no ctypes: pid 1 runs again from its interpreter's copy (a second start); /ctypes
// is the same on the test image given Debian's ctypes, as the official python images have:
// prctl, one start fewer.
func BenchmarkColdPhases(b *testing.B) {
	eng := needEngine(b)
	b.Run("copy", func(b *testing.B) { coldPhases(b, newExec(b, eng, testPolicy())) })
	b.Run("ctypes", func(b *testing.B) {
		img := ctypesImage(b, eng)
		coldPhases(b, newExec(b, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Image = img })))
	})
}

func coldPhases(b *testing.B, e *Executor) {
	phases := map[string][]time.Duration{}
	for i := 0; i < b.N; i++ {
		bx, err := e.newBox(false)
		if err != nil {
			b.Fatal(err)
		}
		t := bx.at
		res, err := e.run(context.Background(), bx, "python", "print('hi')", 30*time.Second, time.Time{}, 65536)
		end := time.Now()
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		for name, d := range map[string]time.Duration{
			"create": t.created.Sub(bx.made), "attach": t.attached.Sub(t.created), "start": t.started.Sub(t.attached),
			"pid1": t.pid1.Sub(t.started), "ready": t.ready.Sub(t.pid1), "call": end.Sub(t.ready), "total": end.Sub(bx.made),
		} {
			phases[name] = append(phases[name], d)
		}
	}
	b.StopTimer()
	for name, ds := range phases {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-ms")
	}
	b.ReportMetric(0, "ns/op")
}
