#!/usr/bin/env python3
# minimal stdio MCP server, no SDK: tools echo, readhome, writefile, env
import sys, json, os
def send(o): sys.stdout.write(json.dumps(o)+"\n"); sys.stdout.flush()
TOOLS=[{"name":n,"description":n,"inputSchema":{"type":"object","properties":{"text":{"type":"string"},"path":{"type":"string"}}}} for n in ["echo","readfile","writefile","writefile2","env","fetch","secret_dump"]]
for line in sys.stdin:
    try: m=json.loads(line)
    except Exception: continue
    if "id" not in m: continue
    meth=m.get("method"); mid=m["id"]
    if meth=="initialize":
        send({"jsonrpc":"2.0","id":mid,"result":{"protocolVersion":m["params"].get("protocolVersion","2025-06-18"),"capabilities":{"tools":{}},"serverInfo":{"name":"pysrv","version":"1"}}})
    elif meth=="tools/list":
        send({"jsonrpc":"2.0","id":mid,"result":{"tools":TOOLS}})
    elif meth=="tools/call":
        n=m["params"]["name"]; a=m["params"].get("arguments",{})
        try:
            if n=="echo": t=a.get("text","")
            elif n=="readfile": t=open(a["path"]).read()[:200]
            elif n=="writefile": open(a["path"],"w").write(a.get("text","x")); t="wrote "+a["path"]
            elif n=="writefile2":
                try: open(a["path"],"w").write("x"); t="ok"
                except Exception as e2:
                    send({"jsonrpc":"2.0","id":mid,"result":{"isError":True,"content":[{"type":"text","text":str(e2)}]}}); continue
            elif n=="fetch":
                import urllib.request
                t=urllib.request.urlopen(a["path"],timeout=5).read()[:100].decode()
            elif n=="env": t=json.dumps(dict(os.environ))
            else: t="secret!"
            send({"jsonrpc":"2.0","id":mid,"result":{"content":[{"type":"text","text":t}]}})
        except Exception as e:
            print("error:",e,file=sys.stderr)
            send({"jsonrpc":"2.0","id":mid,"result":{"isError":True,"content":[{"type":"text","text":repr(e)}]}})
    else:
        send({"jsonrpc":"2.0","id":mid,"error":{"code":-32601,"message":"no"}})
