import sys,os,time,json,http.client; sys.path.insert(0,"/work/notes/atk31")
import mcp; mcp.TOKEN="atk31-token-0123456789abcdef"; mcp.PORT=8831
pid=int(open("/tmp/atk31x/http.pid").read())
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return l.split()[1]
h=mcp.Sess(); print("honest",h.sid,"rss",rss())
codes={}
for i in range(200):
    s=mcp.Sess(init=False)
    st,d=s.post({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x"*10,"version":"1"}}})
    codes[st]=codes.get(st,0)+1
print(codes,"rss",rss())
st,d=h.run("ls"); print("honest existing",st,str(d)[:80])
n=mcp.Sess(init=False); st,d=n.post({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"n","version":"1"}}}); print("new honest",st,str(d)[:200])
