#!/bin/sh
# atk36 F1b: ONE wider cache's server swaps a directory for a link while a narrower start's seed walks it:
# the seed (root) lists the link's target, a directory the server cannot read, into the narrower cache.
set -e
W=$(mktemp -d /tmp/atk36-f1b.XXXXXX)
cd /work/main && git archive HEAD | tar -x -C "$W/"
cp "$(dirname "$(readlink -f "$0")")/f1b_seed_walk_race_test.go.txt" "$W/internal/schemes/wrap/sandbox/atk36_f1b_test.go"
mkdir -p "$W/secretdir/ssh-keys-of-alice" "$W/secretdir/payroll-2026"; ln -s ../token-is-hunter2 "$W/secretdir/lnk"; chmod 700 "$W/secretdir"
cd "$W" && ATK36_SECRET_DIR="$W/secretdir" go test -count=1 -run TestAtk36SeedWalkFollowsASwappedDir -v ./internal/schemes/wrap/sandbox/ || true
rm -rf "$W"
