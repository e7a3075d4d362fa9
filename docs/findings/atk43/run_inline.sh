#!/bin/sh
# copy HEAD to /tmp/atk43/src (if absent), run the atk43 follower tests one at a time
set -e
[ -d /tmp/atk43/src/internal ] || { mkdir -p /tmp/atk43/src; git -C /work/main archive HEAD | tar -x -C /tmp/atk43/src; }
cp /work/notes/atk43/zz_atk43_*_test.go /tmp/atk43/src/internal/serve/wslayer/
cd /tmp/atk43/src
for t in "$@"; do go test -p 1 -count=1 -v -run "^$t\$" ./internal/serve/wslayer/ 2>&1 | grep -E "zz_atk43|^(ok|FAIL|---)" ; done
