"""The attack rounds' MCP client over stdio: one newline-delimited JSON-RPC session with a serve.

Shared by every round from atk43 on (and the rounds whose stdio.py was this file): a script does
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from mcpstdio import Stdio, text
"""
import subprocess, json, sys, os
class Stdio:
    def __init__(self, argv, env=None, err="/dev/null"):
        self.p=subprocess.Popen(argv,stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open(err,"ab"),env=env)
        self.n=0
        self.init=self.req("initialize",{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}})
        self.note("notifications/initialized",{})
    def send(self,obj): self.p.stdin.write((json.dumps(obj)+"\n").encode()); self.p.stdin.flush()
    def note(self,m,p): self.send({"jsonrpc":"2.0","method":m,"params":p})
    def req(self,m,p):
        self.n+=1; self.send({"jsonrpc":"2.0","id":self.n,"method":m,"params":p})
        while True:
            l=self.p.stdout.readline()
            if not l: return None
            d=json.loads(l)
            if d.get("id")==self.n: return d
    def call(self,name,args): return self.req("tools/call",{"name":name,"arguments":args})
    def close(self): self.p.stdin.close(); self.p.wait()
def text(r):
    try: return "\n".join(c.get("text","") for c in r["result"]["content"])
    except Exception: return json.dumps(r)[:2000]
