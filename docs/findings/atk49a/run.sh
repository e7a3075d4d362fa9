#!/bin/bash
# run.sh OUT TEST...: copy the tests (.go.txt) into a copy of HEAD at /tmp/atk49a/src and run each alone
set -u
out=$1; shift
for f in /work/notes/atk49a/zz_atk49a_*_test.go.txt; do cp "$f" /tmp/atk49a/src/internal/serve/wslayer/$(basename "$f" .txt); done
cd /tmp/atk49a/src
for t in "$@"; do
  nice -n 10 go test -p 1 -count=1 -timeout 600s -run "^$t\$" -v ./internal/serve/wslayer/ 2>&1 | grep -E "^\s+zz_|^(---|ok|FAIL|panic)|timed out|\.go:[0-9]+:"
done | tee /work/notes/atk49a/$out
