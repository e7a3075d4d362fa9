#!/bin/bash
# atk38 F2: wrap's "4 MiB either way" frame bound is not held on what it writes to the client:
# showing terminal controls (visibleFrame) turns each raw DEL (1 byte) into U+2421 (3 bytes), so a
# server answer just under 4 MiB reaches the client as a ~12 MiB line. Run as root.
set -u
D=/tmp/atk38/f2; rm -rf $D /tmp/atk38/f2audit; mkdir -p $D /tmp/atk38/f2audit; chmod 755 /tmp/atk38 $D; chmod 700 /tmp/atk38/f2audit
BIN=${BIN:-/tmp/atk38/mcpsandbox}
cp "$(dirname "$0")/expand.py" $D/expand.py; chmod 755 $D/expand.py
cat > $D/wrap.toml <<P
version = 1
scheme = "wrap"
name = "expand"
[limits]
memory = "4GiB"
pids = 256
timeout = "30s"
[audit]
path = "/tmp/atk38/f2audit/audit.jsonl"
[wrap]
network = false
read = ["$D"]
P
chmod 600 $D/wrap.toml
python3 - "$BIN" "$D" "${CH:-DEL}" <<'PY'
import subprocess, json, sys, time
bin, d, which = sys.argv[1:4]
ch = {"DEL": "\x7f", "C1": "\u009b", "plain": "a"}[which]
p = subprocess.Popen([bin, "wrap", "--policy", d+"/wrap.toml", "--", "/usr/bin/python3", d+"/expand.py", ch],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(d+"/wrap.err","wb"))
def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
p.stdout.readline()
send({"jsonrpc":"2.0","method":"notifications/initialized","params":{}})
for k in range(3):
    send({"jsonrpc":"2.0","id":10+k,"method":"tools/call","params":{"name":"t","arguments":{}}})
    l = p.stdout.readline()
    print("tools/call %d: the client got one line of %d bytes (wrap's MaxFrame is %d)" % (10+k, len(l)-1, 4<<20))
hwm = [x for x in open("/proc/%d/status" % p.pid).read().splitlines() if x.startswith(("VmHWM","VmRSS"))]
print("wrap", " ".join(hwm))
p.stdin.close(); p.wait(timeout=10)
PY
cat $D/wrap.err
