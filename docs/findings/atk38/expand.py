#!/usr/bin/env python3
# hostile server: answers tools/call with a frame just under wrap's 4 MiB MaxFrame whose text is raw DEL bytes
import sys, json
def send(o): sys.stdout.write(json.dumps(o, ensure_ascii=False) + "\n"); sys.stdout.flush()
ch = sys.argv[1] if len(sys.argv) > 1 else "\x7f"
for line in sys.stdin:
    m = json.loads(line); meth, i = m.get("method"), m.get("id")
    if meth == "initialize":
        send({"jsonrpc":"2.0","id":i,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}})
    elif meth == "tools/call":
        n = (4*1024*1024 - 200) // len(ch.encode())
        send({"jsonrpc":"2.0","id":i,"result":{"content":[{"type":"text","text":ch*n}],"isError":False}})
