#!/bin/sh
# atk41: copies HEAD of /work/main to /tmp/atk41/src, adds zz_atk41_follow_test.go, runs it alone.
set -e
rm -rf /tmp/atk41/src && mkdir -p /tmp/atk41/src
git -C /work/main archive HEAD | tar -x -C /tmp/atk41/src
cp "$(dirname "$0")/zz_atk41_follow_test.go" /tmp/atk41/src/internal/serve/wslayer/
cd /tmp/atk41/src && git -C /work/main rev-parse --short HEAD && go test -count=1 -run 'TestAtk41LiteralDataFile$' -v ./internal/serve/wslayer 2>&1 | grep -v '^=== RUN'
