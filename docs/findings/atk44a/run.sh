#!/bin/sh
# copy HEAD to /tmp/atk44a/src (if absent), copy the atk44a tests in, run each named test alone
set -e
[ -d /tmp/atk44a/src/internal ] || { mkdir -p /tmp/atk44a/src; git -C /work/main archive HEAD | tar -x -C /tmp/atk44a/src; }
cp /work/notes/atk44a/zz_atk44a_*_test.go /tmp/atk44a/src/internal/serve/wslayer/
cd /tmp/atk44a/src
for t in "$@"; do go test -p 1 -count=1 -v -run "^$t\$" ./internal/serve/wslayer/ 2>&1 | grep -E "zz_atk44a|^(ok|FAIL|---|panic)" ; done
