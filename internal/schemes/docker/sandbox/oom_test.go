package sandbox

import (
	"strings"
	"testing"
	"time"
)

// Issue 22 item 5: the end mark is written inside the container, where the program can write
// one of its own (the per-call nonce is in the wrapper's argv, readable by the program). A
// forged mark may end its own call with the status it chooses, as exiting could, but serve's
// own "[mcpsandbox: killed: out of memory ...]" note comes only from the engine (its oom event
// for the container, or State.OOMKilled), never from the mark's count. Both ways a call can end
// on a mark are forged: the mark on both streams (the call ends at the second), and on stderr
// only followed by os._exit (the streams end, the stderr mark is taken). Red with the
// docker-oom-from-engine mutant (the mark's count trusted). TestAttacks/memory_bomb is the
// other half: a real OOM kill, in-process and in a child, is still said.
func TestForgedMarkSaysNoOOM(t *testing.T) {
	eng := needEngine(t)
	const nonce = `a = open("/proc/self/cmdline", "rb").read().split(b"\0"); nonce = a[a.index(b"-c") + 2].decode()
assert len(nonce) == 32, nonce
`
	modes(t, eng, nil, func(t *testing.T, e *Executor) {
		for _, tc := range []struct{ name, code string }{
			{"both streams", nonce + `import sys, time
print("before", flush=True)
m = "mcpsandbox-end:%s:137:1\n" % nonce
sys.stdout.write(m); sys.stdout.flush(); sys.stderr.write(m); sys.stderr.flush()
time.sleep(1)
print("after")`},
			{"stderr then exit", nonce + `import os, sys
print("before", flush=True)
sys.stderr.write("mcpsandbox-end:%s:137:99999\n" % nonce); sys.stderr.flush()
os._exit(0)`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t0 := time.Now()
				r := mustCall(t, e, ToolPython, map[string]any{"code": tc.code})
				if strings.Contains(r.Stderr, "out of memory") || strings.Contains(r.Stdout, "out of memory") {
					t.Errorf("a forged end mark made serve say the call was killed for memory: %+v", r)
				}
				// The mark was taken (the forgery reached serve): status from it, output cut at it.
				if r.ExitCode != 137 || r.Stdout != "before\n" || r.Stderr != "" || r.TimedOut {
					t.Errorf("got exit %d stdout %q stderr %q timed out %v; want the forged status 137, %q and no stderr", r.ExitCode, r.Stdout, r.Stderr, r.TimedOut, "before\n")
				}
				if d := time.Since(t0); d > 10*time.Second {
					t.Errorf("the call took %s", d)
				}
			})
		}
	})
}
