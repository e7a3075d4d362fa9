#!/bin/sh
# atk36 F1: the npm seed writes through a link another (wider) cache planted. Run as root (or any user).
# Copies HEAD of /work/main to a scratch dir, adds the probe test, runs it, removes the copy.
set -e
W=$(mktemp -d /tmp/atk36-f1.XXXXXX)
cd /work/main && git archive HEAD | tar -x -C "$W/"
cp "$(dirname "$(readlink -f "$0")")/f1_seed_through_link_test.go.txt" "$W/internal/schemes/wrap/sandbox/atk36_f1_test.go"
mkdir -p "$W/outside"; printf 'root:x:0:0::/root:/bin/bash\n' > "$W/victim.txt"
cd "$W" && ATK36_OUTSIDE="$W/outside" ATK36_VICTIM="$W/victim.txt" go test -count=1 -run TestAtk36SeedWritesThroughAnotherCachesLink -v ./internal/schemes/wrap/sandbox/ || true
echo "--- $W/outside:"; ls -la "$W/outside"
echo "--- $W/victim.txt:"; cat "$W/victim.txt"
rm -rf "$W"
