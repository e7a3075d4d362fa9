#!/bin/bash
# run.sh OUT TEST...: copy the tests into the copy of HEAD and run each alone
set -u
out=$1; shift
cp /work/notes/atk48a/zz_atk48a_*_test.go /tmp/atk48a/src/internal/serve/wslayer/
cd /tmp/atk48a/src
for t in "$@"; do
  nice -n 10 go test -p 1 -count=1 -timeout 600s -run "^$t\$" -v ./internal/serve/wslayer/ 2>&1 | grep -E "^\s+zz_|^(---|ok|FAIL|panic)|timed out|\.go:[0-9]+:"
done | tee /work/notes/atk48a/$out
