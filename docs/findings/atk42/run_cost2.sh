#!/bin/sh
# atk42: the same words file's commit cost at HEAD and at 4e29542 (before session 42), one test at a time.
set -e
for rev in ${REVS:-HEAD 4e29542}; do
  rm -rf /tmp/atk42/src2 && mkdir -p /tmp/atk42/src2
  git -C /work/main archive $rev | tar -x -C /tmp/atk42/src2
  cp "$(dirname "$0")/zz_atk42_cost2_test.go" /tmp/atk42/src2/internal/serve/wslayer/
  echo "== $rev ($(git -C /work/main rev-parse --short $rev))"
  (cd /tmp/atk42/src2 && go test -timeout 300s -p 1 -count=1 -run '^TestAtk42WordsCost$' -v ./internal/serve/wslayer 2>&1 | grep -v '^=== RUN' | cut -c1-300)
done
rm -rf /tmp/atk42/src2
