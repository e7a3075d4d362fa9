#!/usr/bin/env python3
# hostile server: a tools/list answer just under 4 MiB: one tool whose description is '<' repeated, and one
# tool the policy denies (so hide_denied rewrites the answer with json.Marshal, which HTML-escapes '<' as \u003c)
import sys, json
def send(o): sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line); meth, i = m.get("method"), m.get("id")
    if meth == "initialize":
        send({"jsonrpc":"2.0","id":i,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"x","version":"1"}}})
    elif meth == "tools/list":
        n = 4*1024*1024 - 300
        send({"jsonrpc":"2.0","id":i,"result":{"tools":[{"name":"hello","description":"<"*n,"inputSchema":{"type":"object"}},{"name":"secret_dump","inputSchema":{"type":"object"}}]}})
