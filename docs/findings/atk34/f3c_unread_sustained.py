# F3 sustained, defaults (limits.timeout 30s, max_file_bytes 4 MiB): one token client keeps ~12 read_file calls of an
# 8 MB workspace file outstanding on sockets it never reads (each closed after 40 s and sent again), spread over 12 HTTP
# sessions (each under its own 32 MiB bound). Another client's small calls, one every few seconds, for 3 minutes.
import sys, os, json, time, subprocess, socket, threading
sys.path.insert(0, "/work/notes/atk34")
PORT=8940; os.environ["PORT"]=str(PORT); os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"; N=int(sys.argv[1]) if len(sys.argv)>1 else 12; DUR=int(sys.argv[2]) if len(sys.argv)>2 else 180
env=dict(os.environ, HOME=X+"/ur/home")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/ur/pol30.toml","--http","127.0.0.1:%d"%PORT,"--token-file",X+"/tok"],stderr=open(X+"/f3c.log","wb"),env=env)
time.sleep(1.5)
stop=False
def hog(i, sid):
    while not stop:
        s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); s.connect(("127.0.0.1",PORT))
        body=json.dumps({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"big2.bin"}}}).encode()
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n"%(PORT,mcp.TOKEN.encode(),sid.encode(),len(body))+body)
        t=time.time()
        while not stop and time.time()-t<40: time.sleep(0.5)
        s.close()
try:
    ss=[mcp.Sess() for _ in range(N)]
    for i in range(N):
        threading.Thread(target=hog,args=(i,ss[i].sid),daemon=True).start(); time.sleep(40.0/N)
    v=mcp.Sess(); T0=time.time(); ok=ref=0; waits=[]
    while time.time()-T0<DUR:
        t=time.time(); st,r=v.run("wc","-c","big.bin",timeout=60); w=time.time()-t; r=mcp.res(r)
        good=isinstance(r,dict) and r.get("exit_code")==0
        ok+=good; ref+=not good; waits.append(w)
        print("t=%3.0fs victim %s after %4.1fs %s"%(time.time()-T0,"ran    " if good else "REFUSED",w,"" if good else json.dumps(r)[:200]),flush=True)
        time.sleep(2)
    print("victim: %d ran, %d refused; median wait %.1fs"%(ok,ref,sorted(waits)[len(waits)//2]))
finally:
    stop=True; time.sleep(1); srv.terminate(); srv.wait()
