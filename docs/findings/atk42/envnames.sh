#!/bin/sh
# atk42: go run envnames.go.txt (as main.go) against a copy of HEAD at /tmp/atk42/src.
set -e
[ -d /tmp/atk42/src/policy ] || { mkdir -p /tmp/atk42/src; git -C /work/main archive HEAD | tar -x -C /tmp/atk42/src; }
mkdir -p /tmp/atk42/src/cmd/atk42envnames
cp "$(dirname "$0")/envnames.go.txt" /tmp/atk42/src/cmd/atk42envnames/main.go
cd /tmp/atk42/src && go run ./cmd/atk42envnames
