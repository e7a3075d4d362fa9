#!/usr/bin/env python3
# hostile server: after initialize, writes short non-JSON lines to its stdout (the MCP channel) for SECS seconds
import sys, json, time
secs = float(sys.argv[1]) if len(sys.argv) > 1 else 10
def send(o): sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
line = sys.stdin.readline(); m = json.loads(line)
send({"jsonrpc":"2.0","id":m["id"],"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}})
end = time.time() + secs; n = 0
buf = "x\n" * 4096
while time.time() < end:
    sys.stdout.write(buf); n += 4096
sys.stdout.flush()
sys.stderr.write("server wrote %d junk lines (%d bytes)\n" % (n, 2*n)); sys.stderr.flush()
for line in sys.stdin: pass
