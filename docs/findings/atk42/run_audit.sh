#!/bin/sh
# atk42: copies HEAD of /work/main to /tmp/atk42/src, adds zz_atk42_audit_test.go, runs it alone.
set -e
rm -rf /tmp/atk42/src && mkdir -p /tmp/atk42/src
git -C /work/main archive HEAD | tar -x -C /tmp/atk42/src
cp "$(dirname "$0")/zz_atk42_audit_test.go" /tmp/atk42/src/internal/serve/audit/
cd /tmp/atk42/src && git -C /work/main rev-parse --short HEAD && go test -p 1 -count=1 -run 'TestAtk42AuditHidden$' -v ./internal/serve/audit 2>&1 | grep -v '^=== RUN'
