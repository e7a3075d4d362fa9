#!/bin/bash
# run.sh OUT TEST...: copy the tests into the copy of HEAD and run each alone
set -u
out=$1; shift
cp /work/notes/atk45a/zz_atk45a_*_test.go /tmp/atk45a/src/internal/serve/wslayer/
cd /tmp/atk45a/src
for t in "$@"; do
  go test -p 1 -count=1 -run "^$t\$" -v ./internal/serve/wslayer/ 2>&1 | grep -E "^\s+zz_|^(---|ok|FAIL|panic)" 
done | tee /work/notes/atk45a/$out
