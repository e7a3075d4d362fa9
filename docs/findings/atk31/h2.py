import sys,os,time,socket; sys.path.insert(0,"/work/notes/atk31")
import mcp; mcp.TOKEN="atk31-token-0123456789abcdef"; mcp.PORT=8831
pid=int(open("/tmp/atk31x/http.pid").read())
def rss():
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return l.split()[1]
h=mcp.Sess(); print("honest sid",h.sid)
N=int(sys.argv[1]); mode=sys.argv[2]
socks=[]
for i in range(N):
    try:
        c=socket.create_connection(("127.0.0.1",8831),timeout=5)
        if mode=="slowbody":
            c.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8831\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer %s\r\nContent-Length: 4000000\r\n\r\n{"%mcp.TOKEN).encode())
        elif mode=="slowhdr":
            c.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8831\r\n")
        socks.append(c)
    except Exception as e: print("open err",i,e); break
print("opened",len(socks),"rss",rss())
for t in [1,5,15,35,65]:
    time.sleep(t if t==1 else t-prev)
    prev=t
    t0=time.time()
    try: st,d=h.run("ls",timeout=10); print(t,"honest",st,str(d)[:80],round(time.time()-t0,2),"rss",rss())
    except Exception as e: print(t,"honest FAIL",e,round(time.time()-t0,2))
    alive=0
    for c in socks:
        try:
            c.setblocking(False); x=c.recv(100)
            if x=="": pass
            else: print("srv said",x[:60]); 
        except BlockingIOError: alive+=1
        except Exception: pass
    print("  still open",alive)
    prev=t
