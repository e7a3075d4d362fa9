#!/bin/bash
# run.sh OUT TEST...: copy the tests into the copy of HEAD and run each alone
set -u
out=$1; shift
cp /work/notes/atk46a/zz_atk46a_*_test.go /tmp/atk46a/src/internal/serve/wslayer/
cd /tmp/atk46a/src
for t in "$@"; do
  go test -p 1 -count=1 -timeout 300s -run "^$t\$" -v ./internal/serve/wslayer/ 2>&1 | grep -E "^\s+zz_|^(---|ok|FAIL|panic)|timed out"
done | tee /work/notes/atk46a/$out
