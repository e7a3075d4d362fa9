package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// e2bHostileRSS is the bound on serve's peak resident memory (VmHWM) while a hostile interpreter
// streams 600 results of 1 MiB and a 3 MB exception at it (it reached 963 MB before #22).
const e2bHostileRSS = 128 << 20

// procKiB reads a "Vm...:  N kB" field of /proc/PID/status, in bytes.
func procKiB(pid int, field string) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// TestE2BHostileInterpreter: the built serve against an interpreter that answers 600 × 1 MiB
// results, then a 3 MB exception echoing the key: serve's peak RSS stays under e2bHostileRSS,
// both results are marked truncated and bounded, no 8 characters of the key come out (result,
// error text, audit log, serve's log), the next call works, and the audit has every call.
func TestE2BHostileInterpreter(t *testing.T) {
	// max_output_bytes 16 KiB: the exception (and the audit reason) stays well under the audit
	// log line limit of main at 84f004a (64 KiB); bounding audit fields is #22 item 1's.
	f := newE2BFixture(t, func(p *policy.Policy) {
		p.Limits.Timeout.Duration = 90 * time.Second
		p.Limits.MaxOutputBytes = 16 << 10
	})
	pid := f.cmd.Process.Pid
	line := []byte(`{"type":"result","text":"` + strings.Repeat("r", 1<<20) + "\"}\n")
	var sent atomic.Int64
	f.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for i := 0; i < 600; i++ {
			if _, err := w.Write(line); err != nil {
				return
			}
			sent.Add(1)
		}
		io.WriteString(w, `{"type":"end_of_execution"}`+"\n")
	}})
	before := procKiB(pid, "VmRSS")
	var rssPeak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if r := procKiB(pid, "VmRSS"); r > rssPeak.Load() {
				rssPeak.Store(r)
			}
			if rssPeak.Load() > 2*e2bHostileRSS {
				f.cmd.Process.Kill() // a serve holding everything: stop it before it takes the machine
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	start := time.Now()
	res, r := f.call("run_code", map[string]any{"code": "1"})
	took := time.Since(start)
	hwm := procKiB(pid, "VmHWM")
	close(stop)
	wg.Wait()
	t.Logf("serve: RSS %d MiB before, peak %d MiB (VmHWM %d MiB) while %d MiB of results streamed in %s; bound %d MiB",
		before>>20, rssPeak.Load()>>20, hwm>>20, sent.Load(), took.Round(time.Millisecond), e2bHostileRSS>>20)
	if hwm > e2bHostileRSS {
		t.Fatalf("serve's peak RSS %d MiB is over the bound %d MiB: the results were held", hwm>>20, e2bHostileRSS>>20)
	}
	if res.IsError || !r.Truncated || len(r.Stdout) > int(f.pol.Limits.MaxOutputBytes) || sent.Load() != 600 {
		t.Fatalf("want a truncated result within max_output_bytes after all 600 results: error=%v truncated=%v len=%d sent=%d", res.IsError, r.Truncated, len(r.Stdout), sent.Load())
	}

	// A 3 MB exception whose value carries the key where the cap cuts.
	// The key straddles both cuts: the exception's (max_output_bytes less the name) and the error
	// text's (max_output_bytes, after "the code raised HostileError: ").
	pad := strings.Repeat("v", int(f.pol.Limits.MaxOutputBytes)-40)
	f.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, `{"type":"error","name":"HostileError","value":"%s%s%s","traceback":"%s"}`+"\n",
			pad, e2bKey, strings.Repeat("v", 1<<20), strings.Repeat("t", 2<<20))
		io.WriteString(w, `{"type":"end_of_execution"}`+"\n")
	}})
	res, _ = f.call("run_code", map[string]any{"code": "1"})
	etext := text(res)
	if !res.IsError || !strings.Contains(etext, "HostileError") || len(etext) > int(f.pol.Limits.MaxOutputBytes)+200 {
		t.Fatalf("want the exception as a bounded tool error: error=%v len=%d", res.IsError, len(etext))
	}
	if hwm := procKiB(pid, "VmHWM"); hwm > e2bHostileRSS {
		t.Fatalf("serve's peak RSS %d MiB after the exception (bound %d MiB)", hwm>>20, e2bHostileRSS>>20)
	}

	res, r = f.call("run_code", map[string]any{"code": "6*7"})
	if res.IsError || r.Stdout != "42\n" {
		t.Fatalf("the next call must work: %.500s", text(res))
	}
	a, _ := os.ReadFile(f.auditPath)
	// each call is two lines: "started" before it runs, then its outcome
	if n, started := strings.Count(string(a), "\n"), strings.Count(string(a), `"decision":"started"`); n != 6 || started != 3 {
		t.Fatalf("the audit must hold the 3 calls (6 lines, 3 of them started), has %d lines, %d started", n, started)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"code": "1"}})
	f.cs.Close()
	for name, s := range map[string]string{"the exception's text": etext, "the audit log": string(a), "serve's log": f.stderr.String()} {
		for i := 0; i+8 <= len(e2bKey); i++ {
			if strings.Contains(s, e2bKey[i:i+8]) {
				t.Fatalf("%s shows part of the key (%q)", name, e2bKey[i:i+8])
			}
		}
	}
}
