import json, http.client, os, sys, time, socket, subprocess
TOKEN = os.environ.get("TOK", "atk29-token-0123456789abcdef")
HOST, PORT = "127.0.0.1", int(os.environ.get("PORT", "8765"))
class Sess:
    def __init__(self, init=True):
        self.sid=None; self.n=0
        if init: self.initialize()
    def post(self, obj, raw=None, timeout=60):
        c=http.client.HTTPConnection(HOST,PORT,timeout=timeout)
        h={"Content-Type":"application/json","Accept":"application/json, text/event-stream","Authorization":"Bearer "+TOKEN}
        if self.sid: h["Mcp-Session-Id"]=self.sid
        body = raw if raw is not None else json.dumps(obj).encode()
        c.request("POST","/mcp",body=body,headers=h)
        r=c.getresponse(); data=r.read()
        sid=r.getheader("Mcp-Session-Id")
        if sid: self.sid=sid
        return r.status, parse(data)
    def initialize(self):
        st,d=self.post({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"atk","version":"1"}}})
        self.post({"jsonrpc":"2.0","method":"notifications/initialized"})
        return d
    def call(self, name, args, timeout=60):
        self.n+=1
        return self.post({"jsonrpc":"2.0","id":self.n,"method":"tools/call","params":{"name":name,"arguments":args}},timeout=timeout)
    def run(self, cmd, *args, timeout=60):
        return self.call("run_allowed_command",{"command":cmd,"args":list(args)},timeout=timeout)
def parse(data):
    t=data.decode(errors="replace")
    out=[]
    for line in t.splitlines():
        if line.startswith("data:"):
            try: out.append(json.loads(line[5:]))
            except Exception: out.append(line)
    if out: return out
    try: return json.loads(t)
    except Exception: return t
def res(d):
    # structured content
    if isinstance(d,list): d=d[-1]
    if isinstance(d,dict) and "result" in d:
        r=d["result"]; return r.get("structuredContent") or r.get("content")
    return d
import base64
def py(s, code, timeout=60):
    b=base64.b64encode(code.encode()).decode()
    return s.run("python3.11","-c","import base64;exec(base64.b64decode('%s'))"%b, timeout=timeout)
