import subprocess, json, sys, os
class Stdio:
    def __init__(self, argv, env=None):
        self.p=subprocess.Popen(argv,stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk34x/stdio.err","ab"),env=env)
        self.n=0
        self.req("initialize",{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}})
        self.note("notifications/initialized",{})
    def note(self,m,p): self.p.stdin.write((json.dumps({"jsonrpc":"2.0","method":m,"params":p})+"\n").encode()); self.p.stdin.flush()
    def req(self,m,p):
        self.n+=1; self.p.stdin.write((json.dumps({"jsonrpc":"2.0","id":self.n,"method":m,"params":p})+"\n").encode()); self.p.stdin.flush()
        while True:
            l=self.p.stdout.readline()
            if not l: return None
            d=json.loads(l)
            if d.get("id")==self.n: return d
    def call(self,name,args): return self.req("tools/call",{"name":name,"arguments":args})
    def close(self): self.p.stdin.close(); self.p.wait()
