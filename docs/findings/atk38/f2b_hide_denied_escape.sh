#!/bin/bash
# atk38 F2b: with hide_denied, the relay re-encodes a tools/list answer with json.Marshal, which escapes
# every '<', '>' and '&' as \u003c (6 bytes): a 4 MiB answer reaches the client as a ~24 MiB line. Root.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
D=/tmp/atk38/f2b; rm -rf $D /tmp/atk38/f2baudit; mkdir -p $D /tmp/atk38/f2baudit; chmod 755 /tmp/atk38 $D; chmod 700 /tmp/atk38/f2baudit
BIN=${BIN:-/tmp/atk38/mcpsandbox}
cp $HERE/ltlist.py $D/ltlist.py; chmod 755 $D/ltlist.py
cat > $D/wrap.toml <<P
version = 1
scheme = "wrap"
name = "ltlist"
[limits]
memory = "4GiB"
pids = 256
[audit]
path = "/tmp/atk38/f2baudit/audit.jsonl"
[wrap]
network = false
read = ["$D"]
[wrap.tools]
deny = ["secret_*"]
hide_denied = true
P
chmod 600 $D/wrap.toml
python3 - "$BIN" "$D" <<'PY'
import subprocess, json, sys
bin, d = sys.argv[1:3]
p = subprocess.Popen([bin, "wrap", "--policy", d+"/wrap.toml", "--", "/usr/bin/python3", d+"/ltlist.py"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(d+"/wrap.err","wb"))
def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
p.stdout.readline()
send({"jsonrpc":"2.0","method":"notifications/initialized","params":{}})
for k in range(3):
    send({"jsonrpc":"2.0","id":10+k,"method":"tools/list","params":{}})
    l = p.stdout.readline()
    print("tools/list %d: the client got one line of %d bytes (wrap's MaxFrame is %d); tools: %s" % (10+k, len(l)-1, 4<<20, [t["name"] for t in json.loads(l)["result"]["tools"]]))
print("wrap", " ".join(x for x in open("/proc/%d/status" % p.pid).read().splitlines() if x.startswith(("VmHWM","VmRSS"))))
p.stdin.close(); p.wait(timeout=10)
PY
cat $D/wrap.err
