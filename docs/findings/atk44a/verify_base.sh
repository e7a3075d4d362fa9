#!/bin/bash
# Dump each base case's program (A44_DUMP) and run it with the real python3 / node: does plugins/p.* run?
set -u
[ -d /tmp/atk44a/src/internal ] || { mkdir -p /tmp/atk44a/src; git -C /work/main archive HEAD | tar -x -C /tmp/atk44a/src; }
D=/tmp/atk44a/dump; rm -rf $D; mkdir -p $D
cp /work/notes/atk44a/zz_atk44a_*_test.go /tmp/atk44a/src/internal/serve/wslayer/
(cd /tmp/atk44a/src && A44_DUMP=$D go test -p 1 -count=1 -run '^TestAtk44a(Py|JS)Base$' ./internal/serve/wslayer/ >/dev/null)
for w in $D/py/*/; do mkdir -p $w/plugins; echo "print('RAN plugins/p.py')" > $w/plugins/p.py
  printf 'python3 %-66s -> %s\n' "$(cat $w/name)" "$(cd $w && python3 srv/main.py 2>&1 | tail -1)"; done
for w in $D/js/*/; do mkdir -p $w/plugins; echo "console.log('RAN plugins/p.js')" > $w/plugins/p.js
  printf 'node    %-66s -> %s\n' "$(cat $w/name)" "$(cd $w && node srv/index.js 2>&1 | tail -1)"; done
rm -rf $D
