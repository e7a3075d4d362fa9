#!/bin/sh
# atk42: copies HEAD of /work/main to /tmp/atk42/src, adds zz_atk42_envrc_test.go (and the follow test for its helpers), runs its tests one at a time.
set -e
rm -rf /tmp/atk42/src && mkdir -p /tmp/atk42/src
git -C /work/main archive HEAD | tar -x -C /tmp/atk42/src
cp "$(dirname "$0")/zz_atk42_envrc_test.go" /tmp/atk42/src/internal/serve/wslayer/
cp "$(dirname "$0")/zz_atk42_follow_test.go" /tmp/atk42/src/internal/serve/wslayer/
cd /tmp/atk42/src && git -C /work/main rev-parse --short HEAD
for t in TestAtk42Envrc; do
  go test -p 1 -count=1 -run "^$t\$" -v ./internal/serve/wslayer 2>&1 | grep -v '^=== RUN' | cut -c1-700
done
