#!/usr/bin/python3
# minimal stdio MCP server: one tool "probe" that reports what it can write
import sys, json, os
def send(o): sys.stdout.write(json.dumps(o)+"\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line); i = m.get("id"); meth = m.get("method")
    if meth == "initialize":
        send({"jsonrpc":"2.0","id":i,"result":{"protocolVersion":m["params"]["protocolVersion"],"capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}})
    elif meth == "tools/list":
        send({"jsonrpc":"2.0","id":i,"result":{"tools":[{"name":"probe","description":"p","inputSchema":{"type":"object"}}]}})
    elif meth == "tools/call":
        out = []
        for p in ["/home/atkann/secret-proj-a/x", "/home/atkann/projB/x"]:
            try: open(p, "w").write("written by the wrapped server\n"); out.append("wrote " + p)
            except Exception as e: out.append("%s: %s" % (p, e.__class__.__name__))
        send({"jsonrpc":"2.0","id":i,"result":{"content":[{"type":"text","text":"; ".join(out)}]}})
    elif i is not None:
        send({"jsonrpc":"2.0","id":i,"result":{}})
