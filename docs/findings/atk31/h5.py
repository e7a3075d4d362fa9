# N connections that send a partial request header (optionally with the token line) and then nothing; an honest token client then calls
import sys,os,time,socket; sys.path.insert(0,"/work/notes/atk31")
import mcp; mcp.TOKEN="atk31-token-0123456789abcdef"; mcp.PORT=8831
pid=int(open("/tmp/atk31x/http.pid").read())
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return l.split()[1]
N=int(sys.argv[1]); tok=sys.argv[2]=="tok"
h=mcp.Sess(); print("honest ok before", h.run("ls")[0])
socks=[]
for i in range(N):
    try:
        c=socket.create_connection(("127.0.0.1",8831),timeout=3)
        c.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8831\r\n"+((b"Authorization: Bearer "+mcp.TOKEN.encode()+b"\r\n") if tok else b""))
        socks.append(c)
    except Exception as e: print("err",e); break
print("opened",len(socks),"rss",rss())
t0=time.time()
while time.time()-t0<40:
    t=time.time()
    try: st,d=h.run("ls",timeout=10); print(round(t-t0,1),"honest",st,round(time.time()-t,3))
    except Exception as e: print(round(t-t0,1),"honest FAIL",type(e).__name__)
    time.sleep(4)
