import sys,os,time,socket; sys.path.insert(0,"/work/notes/atk31")
import mcp; mcp.TOKEN="atk31-token-0123456789abcdef"; mcp.PORT=8831
pid=int(open("/tmp/atk31x/http.pid").read())
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return l.split()[1]
h=mcp.Sess()
def sendq(c,b):
    try: c.sendall(b)
    except Exception as e: print('send',e)
# huge header
c=socket.create_connection(("127.0.0.1",8831)); sendq(c,b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8831\r\nAuthorization: Bearer "+mcp.TOKEN.encode()+b"\r\nX-A: "+b"a"*5_000_000+b"\r\n\r\n")
c.settimeout(5)
try: print("huge hdr",c.recv(200)[:120])
except Exception as e: print("huge hdr",e)
# many headers
c=socket.create_connection(("127.0.0.1",8831)); sendq(c,b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8831\r\n"+b"".join(b"X-%d: a\r\n"%i for i in range(100000))+b"\r\n")
c.settimeout(5)
try: print("many hdr",c.recv(200)[:120])
except Exception as e: print("many hdr",e)
# slow header connections with token partially sent
socks=[]
for i in range(400):
    try:
        c=socket.create_connection(("127.0.0.1",8831),timeout=3); c.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8831\r\nAuthorization: Bearer "+mcp.TOKEN.encode()+b"\r\n"); socks.append(c)
    except Exception as e: print("err",e); break
print("slowhdr opened",len(socks),"rss",rss())
for k in range(3):
    time.sleep(3); t=time.time()
    try: st,d=h.run("ls",timeout=10); print("honest",st,round(time.time()-t,3),"rss",rss())
    except Exception as e: print("honest FAIL",e)
n=mcp.Sess(init=False); t=time.time(); st,d=n.post({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"n","version":"1"}}}); print("new session",st,round(time.time()-t,3))
