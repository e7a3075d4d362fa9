#!/bin/sh
# atk36 F3: the audit redacts the value of every variable whose NAME looks secret (…SESSION…, …AUTH…, …KEY…),
# 6+ characters, whatever the value: a desktop session's ordinary variables (DESKTOP_SESSION=ubuntu,
# XDG_SESSION_TYPE=wayland, GDMSESSION=ubuntu) make every "ubuntu"/"wayland" in a call's arguments
# and in reasons unreadable in the audit log. Run as root; needs /tmp/atk36/mcpsandbox.
set -e
. /work/notes/atk36/setup.sh
D=/tmp/atk36/f3; rm -rf $D; mkdir -p $D/ws
cat > $D/pol.toml <<P
version = 1
scheme  = "allowlist"
name    = "sandbox"
[audit]
path = "$D/audit.jsonl"
[allowlist]
workspace = "$D/ws"
network   = false
[[allowlist.commands]]
name   = "rm"
path   = "/usr/bin/rm"
sha256 = "$(sha256sum /usr/bin/rm | cut -d' ' -f1)"
P
echo important > "$D/ws/ubuntu-release-notes.md"; echo keep > "$D/ws/wayland.conf"; chown -R 65534:65534 $D/ws
# what a client (Claude Code, Gemini CLI) started from a GNOME/Ubuntu session passes to serve
export DESKTOP_SESSION=ubuntu XDG_SESSION_DESKTOP=ubuntu XDG_SESSION_TYPE=wayland GDMSESSION=ubuntu
python3 - <<'PY'
import sys; sys.path.insert(0,'/tmp/atk36'); from stdio import *
s=Stdio(['/tmp/atk36/mcpsandbox','serve','--policy','/tmp/atk36/f3/pol.toml'])
r=s.call('run_allowed_command',{'command':'rm','args':['-f','ubuntu-release-notes.md','wayland.conf']})
print("=== result:"); print(text(r))
s.close()
PY
echo "=== what the call did: workspace now holds:"; ls -A $D/ws
echo "=== the audit log's lines for it (arguments and file records):"
python3 -c "
import json
for l in open('$D/audit.jsonl'):
    e=json.loads(l); print(e.get('decision'), e.get('tool'), json.dumps(e.get('arguments')), e.get('reason',''))"
rm -rf $D
