#!/bin/sh
# F7: wrap: a tools/call in flight when the client quits is recorded "cancelled" ("the server was stopped"), but the
# wrapped server keeps running for wrap's 2 s grace with its stdin closed and its writes (wrap.write, no layer) land:
# the audit says cancelled for a call whose effect happened. serve's `cancelled` line says what was applied; wrap's
# says nothing of it.
set -e
D=/tmp/atk39b/f7; rm -rf $D; mkdir -p $D/out; chmod 777 $D/out
cat > $D/srv.py <<'PY'
import sys, json, time
def send(o): sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}})
    elif m.get("method") == "tools/list":
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"tools": [{"name": "deploy", "inputSchema": {"type": "object"}}]}})
    elif m.get("method") == "tools/call":
        time.sleep(0.5)
        open("/tmp/atk39b/f7/out/deployed", "w").write("the call's effect\n")
        time.sleep(3.0)   # would answer after wrap's 2 s grace: killed first
        send({"jsonrpc": "2.0", "id": m["id"], "result": {"content": [{"type": "text", "text": "deployed"}]}})
PY
cat > $D/pol.toml <<P
version = 1
scheme  = "wrap"
name    = "deployer"
[limits]
timeout = "30s"
[audit]
path = "$D/audit.jsonl"
[wrap]
command = ["python3", "$D/srv.py"]
read    = ["$D/srv.py"]
write   = ["$D/out"]
P
chmod 600 $D/pol.toml
python3 - <<PY
import subprocess, json, time
p = subprocess.Popen(["/tmp/atk39b/mcpsandbox", "wrap", "--policy", "$D/pol.toml"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open("$D/wrap.err", "wb"))
def send(o): p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
print("initialize:", p.stdout.readline().decode()[:100])
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "deploy", "arguments": {}}})
time.sleep(0.2); p.stdin.close()   # the client quits mid-call
p.wait(timeout=20); print("wrap exited", p.returncode)
PY
echo "== the call's effect on the host: $(cat $D/out/deployed 2>/dev/null || echo absent)"
echo "== audit lines of the call:"; python3 -c "
import json
for l in open('$D/audit.jsonl'):
    e=json.loads(l)
    if e.get('tool')=='deploy': print(e.get('decision'), '|', e.get('reason','')[:160])"
