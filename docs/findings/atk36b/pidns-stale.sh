#!/bin/bash
# atk36b F2: a verify in another pid namespace (a container or a sandbox sharing /var/tmp) marks its
# arenas with its own namespace's pid; a verify outside reads that pid as gone (or as another
# process) and removes the arenas of a run still going on.
# Run as root. Needs /tmp/atk36b/mcpsandbox.
BIN=${BIN:-/tmp/atk36b/mcpsandbox}
unshare --pid --fork --mount-proc timeout -s TERM 40 "$BIN" verify --default >/tmp/atk36b/inner.out 2>&1 &
IN=$!
sleep 4
mine() { for d in /var/tmp/mcpsandbox-harness-*; do m="$d/.mcpsandbox-harness-run"; [ -f "$m" ] && echo "$d $(cat $m)"; done; }
echo "marked arenas while the inner run goes on:"; mine
timeout -s TERM 6 "$BIN" verify --default >/tmp/atk36b/outer.out 2>&1
echo "after the outer verify started:"; mine
wait $IN
echo "inner verify's end:"; grep -iE "error|breach|no such|verdict|FAIL|PASS" /tmp/atk36b/inner.out | head -15
