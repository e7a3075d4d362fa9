import sys,os,time,socket,threading,json; sys.path.insert(0,"/work/notes/atk31")
os.environ.setdefault("PORT","8831")
import mcp; mcp.TOKEN="atk31-token-0123456789abcdef"; mcp.PORT=8831
pid=int(open("/tmp/atk31x/http.pid").read())
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return l.split()[1]
print("rss0",rss())
# 1. SSE GET streams: many per session
s=mcp.Sess(); print("sid",s.sid)
socks=[]
for i in range(int(sys.argv[1]) if len(sys.argv)>1 else 100):
    c=socket.create_connection(("127.0.0.1",8831))
    c.sendall(("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:8831\r\nAccept: text/event-stream\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\n\r\n"%(mcp.TOKEN,s.sid)).encode())
    socks.append(c)
time.sleep(1)
for c in socks[:3]+socks[-3:]:
    c.settimeout(1)
    try: print(repr(c.recv(300)[:200]))
    except Exception as e: print("err",e)
print("rss1",rss())
t=time.time(); h=mcp.Sess(); st,d=h.run("ls"); print("honest",st,str(d)[:150],time.time()-t)
