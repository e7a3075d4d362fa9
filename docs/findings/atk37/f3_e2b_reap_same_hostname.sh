#!/bin/sh
# atk37 F3: e2b's start-up sweep ("kill the sandboxes of dead serves") judges a sandbox's serve by the
# labels mcpsandbox_host (the host NAME) + pid + process start ticks, checked against THIS machine's
# /proc. Another machine with the same host name (ubuntu, localhost, debian, raspberrypi, a cloned VM
# image, MacBook-Pro.local ...) sharing the team's E2B key, or another serve on this host in another pid
# namespace, has pids that mean nothing here: its live sandboxes are judged dead and killed when this
# serve starts. The docker reaper labels machine id, boot id and pid namespace for exactly this; e2b's
# does not.
# Simulation: "machine B" = a serve in its own UTS + pid namespace with host name "ubuntu"; "machine A" =
# a serve in the host's pid namespace, host name "ubuntu" (its own UTS namespace: the real host name is
# untouched). Both use the repository's local E2B server (internal/harness/e2bfake, built into a
# throwaway program from a git archive of HEAD). Run as root.
set -e
. /work/notes/atk37/setup.sh
D=/tmp/atk37/f3; rm -rf $D $D-src; mkdir -p $D $D-src/cmd/atk37fake
(cd /work/main && git archive HEAD) | tar -x -C $D-src
cat > $D-src/cmd/atk37fake/main.go <<'G'
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

func main() {
	f, err := e2bfake.New(e2bfake.Options{APIKey: os.Getenv("E2B_API_KEY")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(f.URL(), f.Domain())
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	<-c
	f.Close()
}
G
(cd $D-src && CGO_ENABLED=0 go build -o $D/fake ./cmd/atk37fake)
export E2B_API_KEY=e2b_atk37_0123456789abcdef0123456789abcdef
$D/fake > $D/fake.out 2>$D/fake.err & FAKE=$!
sleep 1
export E2B_API_URL=$(cut -d' ' -f1 $D/fake.out) E2B_SANDBOX_URL=$(cut -d' ' -f1 $D/fake.out) E2B_DOMAIN=$(cut -d' ' -f2 $D/fake.out)
cat > $D/pol.toml <<P
version = 1
scheme  = "e2b"
name    = "sandbox"
[limits]
timeout = "60s"
[audit]
path = "$D/audit.jsonl"
[e2b]
template = "code-interpreter-v1"
api_key_env = "E2B_API_KEY"
sandbox_timeout = "5m"
reuse = "session"
allow_internet = false
P
cat > $D/sess.py <<'PY'
import sys,time; sys.path.insert(0,'/tmp/atk37'); from stdio import *
who, err, wait = sys.argv[1], sys.argv[2], float(sys.argv[3])
s=Stdio(['/tmp/atk37/mcpsandbox','serve','--policy','/tmp/atk37/f3/pol.toml'], err=err)
s.req("tools/list",{})
r=s.call('write_file',{'path':'state.txt','content':'session state of '+who}); print(who,"write_file:", text(r).strip()[:120], flush=True)
time.sleep(wait)
r=s.call('read_file',{'path':'state.txt'}); print(who,"read_file", wait, "s later:", text(r).strip().replace("\n"," | ")[:300], flush=True)
s.close()
PY
echo "== machine B (host name ubuntu, its own pid namespace) starts a session and writes its state:"
unshare --uts --pid --fork --mount-proc sh -c "hostname ubuntu; python3 $D/sess.py B $D/b.err 8" > $D/b.out 2>&1 &
sleep 3; cat $D/b.out
echo "== machine A (host name ubuntu) starts its own serve and session:"
unshare --uts sh -c "hostname ubuntu; python3 $D/sess.py A $D/a.err 1"
wait %2 2>/dev/null || sleep 7
echo "== machine B, 8 s after its write, reads its state back:"
tail -1 $D/b.out
echo "== serve A's log (stderr):"; grep -E 'killed a sandbox' $D/a.err | cut -c1-200
echo "== serve B's log (stderr):"; grep -E 'gone' $D/b.err | cut -c1-200
kill $FAKE; wait $FAKE 2>/dev/null || true
rm -rf $D $D-src
