//go:build testhooks

package docker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-units"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchRows: pooled and cold calls of the docker scheme on the offline test image (at most 40
// a row), for the engine's default runtime and for crun and runsc where the engine has them,
// beside two baselines in the same run: the same container through the Engine API with no
// serve (create, attach, start, output), and `docker run --rm` with the same flags through the
// CLI.
func benchRows(ctx context.Context, b *scheme.BenchRun) error {
	n, row := min(b.N, 40), b.Row
	image := os.Getenv("MCPSANDBOX_TEST_IMAGE")
	if image == "" {
		image = "mcpsandbox-test:bookworm"
	}
	if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", image).CombinedOutput(); err != nil {
		return fmt.Errorf("no engine or no image %s (build it: sh scripts/build-test-image.sh): %s", image, strings.TrimSpace(string(out)))
	}
	api, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return err
	}
	defer api.Close()
	info, err := api.Info(ctx)
	if err != nil {
		return err
	}
	// Calls come 300 ms apart, as a client's think time: a pooled call's replacement and a
	// finished call's removal run off the calls' path, but on a 2-CPU host a removal still
	// running when the next cold call starts competes with it for the engine's CPU.
	const apart = 300 * time.Millisecond
	// Pooled calls come further apart than one refill takes (the pool's one filler makes ~2
	// containers a second on a 2-CPU host): each finds a container ready, as the row's name
	// says. How the pool fares at faster rates is the load rows' question.
	const pooledApart = 700 * time.Millisecond
	vs := []variant{{"", 4, n / 2, pooledApart, false}, {"", 0, n / 2, apart, true}}
	switch b.Part {
	case "load": // -only docker:load
		return loadAndRefill(ctx, b, api, image, 20*time.Second)
	case "calls": // -only docker:calls
		return fewRows(ctx, b, api, image, vs, apart, 0)
	case "":
	default:
		return fmt.Errorf("-only docker:%s: the docker parts are load (the pool under sustained load, the engine's throughput) and calls (pooled and cold calls beside the Engine API)", b.Part)
	}
	if !b.Only { // the default bench: the default runtime's rows, its baseline and the load rows
		return fewRows(ctx, b, api, image, vs, apart, 10*time.Second)
	}
	vs = append(vs, variant{"", 0, n, 0, false})
	if _, ok := info.Runtimes["crun"]; ok {
		vs = append(vs, variant{"crun", 4, n / 2, pooledApart, false}, variant{"crun", 0, n / 2, apart, false})
	} else {
		b.Note("docker runtime crun: not registered in this engine (sh scripts/docker-runtimes.sh)")
	}
	if _, ok := info.Runtimes["runsc"]; ok {
		// gVisor starts a container in ~1.5 s here: fewer calls, and think time enough to refill.
		vs = append(vs, variant{"runsc", 4, min(n, 10), 2 * time.Second, false}, variant{"runsc", 0, min(n, 10), apart, false})
	} else {
		b.Note("docker runtime runsc: not registered in this engine (sh scripts/docker-runtimes.sh)")
	}
	if err := variantRows(ctx, b, api, image, vs); err != nil {
		return err
	}
	var cli []time.Duration
	for i := 0; i < min(n, 10); i++ {
		t0 := time.Now()
		c := exec.CommandContext(ctx, "docker", "run", "--rm", "-i", "--network", "none", "--read-only", "--cap-drop", "ALL",
			"--security-opt", "no-new-privileges", "--user", "65534:65534", "--memory", "256m", "--pids-limit", "64",
			"--cpus", "0.5", "--init", "--tmpfs", "/tmp:size=64m,nosuid,nodev", image, "python3", "-c", "print(1)")
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("docker run: %v %s", err, out)
		}
		cli = append(cli, time.Since(t0))
	}
	row("baseline: docker run --rm, same flags, CLI; client: docker CLI", cli)
	if err := benchSessions(ctx, b, image); err != nil { // reuse = "session" (bench_session_testhooks.go)
		b.Skip("docker sessions", err)
	}
	return loadAndRefill(ctx, b, api, image, 20*time.Second)
}

// engineClient states the client of the Engine API baselines.
const engineClient = "; client: Docker Engine API (Go client), no serve"

// fewRows are the default bench's docker rows: pooled and cold calls on the engine's default
// runtime beside the Engine API's own create+start, then (phase > 0) the load rows.
func fewRows(ctx context.Context, b *scheme.BenchRun, api *client.Client, image string, vs []variant, apart, phase time.Duration) error {
	if err := variantRows(ctx, b, api, image, vs); err != nil {
		return err
	}
	if err := startRow(ctx, b, image); err != nil {
		return fmt.Errorf("docker serve start: %w", err)
	}
	if phase == 0 {
		return nil
	}
	return loadAndRefill(ctx, b, api, image, phase)
}

// loadAndRefill: the load rows, then the engine's own container throughput with one and with
// two containers made at once (what a serial or a parallel refill could reach at most).
func loadAndRefill(ctx context.Context, b *scheme.BenchRun, api *client.Client, image string, phase time.Duration) error {
	if err := loadRows(ctx, b, image, phase); err != nil {
		return fmt.Errorf("docker under load: %w", err)
	}
	for _, k := range []int{1, 2} {
		rate, d, err := engineThroughput(ctx, api, image, k, phase/2)
		if err != nil {
			return err
		}
		b.Row(fmt.Sprintf("engine throughput, %d at once: create+attach+start to output, then remove, for %s: %.1f containers/s%s", k, phase/2, rate, engineClient), d)
	}
	return nil
}

// variant is one row of calls: the runtime ("" = the engine's default), the pool size, the
// number of calls, and a client's think time between them (the pool refills).
type variant struct {
	runtime string
	pool    int
	n       int
	apart   time.Duration
	engine  bool // alternate each call with the Engine API baseline's container (its own row)
}

// variantRows times each variant's calls through a serve of its own.
func variantRows(ctx context.Context, b *scheme.BenchRun, api *client.Client, image string, vs []variant) error {
	row := b.Row
	for _, v := range vs {
		pol, err := benchPolicy(b.Dir, image, v.runtime, v.pool)
		if err != nil {
			return err
		}
		var raw []time.Duration
		var between func() error
		if v.engine {
			between = func() error {
				time.Sleep(v.apart)
				d, err := benchEngine(ctx, api, image, 1, 0)
				raw = append(raw, d...)
				return err
			}
		}
		d, err := benchCalls(ctx, b, pol, v.n, v.pool > 0, v.apart, between)
		if err != nil {
			return fmt.Errorf("runtime %q pool %d: %w", v.runtime, v.pool, err)
		}
		what := fmt.Sprintf("docker run_python_sandbox, cold (fresh container per call, %s apart)", v.apart)
		if v.apart == 0 { // not judged: the previous call's removal competes with this one
			what = "docker run_python_sandbox, back-to-back cold calls"
		}
		if v.pool > 0 {
			what = fmt.Sprintf("docker run_python_sandbox, pooled (pool = %d, %s apart)", v.pool, v.apart)
		}
		if v.runtime != "" {
			what = "runtime " + v.runtime + ": " + what
		}
		row(what+goClient, d)
		if v.engine {
			row(fmt.Sprintf("baseline: Engine API create+attach+start to output, same flags, no serve, %s apart, alternating with the row above's calls", v.apart)+engineClient, raw)
		}
	}
	return nil
}

// benchPolicy writes a docker policy of the image, runtime and pool for the bench's serves.
func benchPolicy(dir, image, runtime string, pool int) (string, error) {
	p := policy.Default(dksec.Name)
	dksec.Of(p).Image, dksec.Of(p).Pool, dksec.Of(p).Runtime = image, pool, runtime
	name := fmt.Sprintf("docker-%s-%d", runtime, pool)
	p.Audit.Path = filepath.Join(dir, name+"-audit.jsonl")
	text, _ := policy.Marshal(p)
	pol := filepath.Join(dir, name+".toml")
	return pol, os.WriteFile(pol, text, 0o600)
}

// startRow times a docker serve's start to initialize and tools/list answered: before it
// answers, serve asks the engine whether it can serve the policy (Reachable), which the
// allowlist's start has no need of.
func startRow(ctx context.Context, b *scheme.BenchRun, image string) error {
	pol, err := benchPolicy(b.Dir, image, "", 0)
	if err != nil {
		return err
	}
	var d []time.Duration
	for i := range 11 {
		t0 := time.Now()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx,
			&mcp.CommandTransport{Command: exec.Command(b.Bin, "serve", "--policy", pol, "--log-level", "error")}, nil)
		if err != nil {
			return err
		}
		_, err = cs.ListTools(ctx, nil)
		if i > 0 { // the first reads the binary into the page cache
			d = append(d, time.Since(t0))
		}
		cs.Close()
		if err != nil {
			return err
		}
	}
	b.Row("docker serve start -> initialize + tools/list answered (spawn to answer; the engine asked first)"+goClient, d)
	return nil
}

// benchCalls times n calls of print(1) through one serve of the policy.
// between, if not nil, runs after each call (off its clock).
func benchCalls(ctx context.Context, b *scheme.BenchRun, pol string, n int, pooled bool, apart time.Duration, between func() error) ([]time.Duration, error) {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx,
		&mcp.CommandTransport{Command: exec.Command(b.Bin, "serve", "--policy", pol, "--log-level", "error")}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	call := &mcp.CallToolParams{Name: "run_python_sandbox", Arguments: map[string]any{"code": "print(1)"}}
	if _, err := b.TimeCalls(ctx, 2, cs, call); err != nil { // warm the image cache (and the pool)
		return nil, err
	}
	if pooled { // the pool refills before the first timed call
		time.Sleep(3 * time.Second)
	}
	var d []time.Duration
	for i := 0; i < n; i++ {
		time.Sleep(apart)
		one, err := b.TimeCalls(ctx, 1, cs, call)
		if err != nil {
			return nil, err
		}
		d = append(d, one...)
		if between != nil {
			if err := between(); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// benchEngine: the container a cold call gets, as far as flags go, made through the Engine
// API directly: create, attach, start, and the time until its output arrives. Removal runs off
// the clock, as serve's does.
func benchEngine(ctx context.Context, api *client.Client, image string, n int, apart time.Duration) ([]time.Duration, error) {
	var wg sync.WaitGroup
	defer wg.Wait()
	var d []time.Duration
	for i := 0; i < n; i++ {
		time.Sleep(apart)
		init, pids := true, int64(64)
		t0 := time.Now()
		cr, err := api.ContainerCreate(ctx, &container.Config{
			Image: image, User: "65534:65534", Cmd: []string{"python3", "-c", "print(1)"}, NetworkDisabled: true,
			AttachStdout: true, AttachStderr: true, Labels: map[string]string{"dev.mcpsandbox.bench": "1"},
		}, &container.HostConfig{
			NetworkMode: "none", ReadonlyRootfs: true, CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"},
			Init: &init, Tmpfs: map[string]string{"/tmp": "rw,nosuid,nodev,size=67108864"}, LogConfig: container.LogConfig{Type: "none"},
			Resources: container.Resources{Memory: 256 << 20, MemorySwap: 256 << 20, NanoCPUs: 5e8, PidsLimit: &pids,
				Ulimits: []*units.Ulimit{{Name: "nofile", Soft: 1024, Hard: 1024}}},
		}, nil, nil, "")
		if err != nil {
			return nil, err
		}
		remove := func() {
			wg.Add(1)
			go func() {
				defer wg.Done()
				api.ContainerRemove(context.WithoutCancel(ctx), cr.ID, container.RemoveOptions{Force: true})
			}()
		}
		hj, err := api.ContainerAttach(ctx, cr.ID, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
		if err != nil {
			remove()
			return nil, err
		}
		if err := api.ContainerStart(ctx, cr.ID, container.StartOptions{}); err != nil {
			hj.Close()
			remove()
			return nil, err
		}
		// The clock stops at the output, as a call's does at the wrapper's end mark: not at the
		// engine's exit path (attach EOF), which comes tens of ms later.
		out := &outputSeen{want: "1\n", seen: make(chan struct{})}
		var errb bytes.Buffer
		done := make(chan struct{})
		go func() { stdcopy.StdCopy(out, &errb, hj.Reader); close(done) }()
		select {
		case <-out.seen:
		case <-done:
		}
		d = append(d, time.Since(t0))
		hj.Close()
		<-done
		remove()
		if out.buf.String() != "1\n" {
			return nil, fmt.Errorf("engine baseline: output %q, stderr %q", out.buf.String(), errb.String())
		}
	}
	slices.Sort(d)
	return d, nil
}

// outputSeen closes seen once what it was written holds want.
type outputSeen struct {
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (o *outputSeen) Write(p []byte) (int, error) {
	o.buf.Write(p)
	if strings.Contains(o.buf.String(), o.want) {
		o.once.Do(func() { close(o.seen) })
	}
	return len(p), nil
}
