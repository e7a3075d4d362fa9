# serve --http, allowlist scheme (policy unread-policy.toml: defaults but timeout 10s, a 3 MB file in the workspace).
# One token client opens 8 sessions; each asks read_file for the 3 MB file on a socket with a 4 KiB receive buffer and
# reads 16 KiB every 5 s: the write-stall cut (30 s without a 64 KiB chunk going out) never fires, each answer stays
# "held" (~16 MiB counted each), the serve-wide 128 MiB bound of unread answers is full, and another client's call is
# refused with serve.unread_answers. README: "the client only stalls itself".
import sys, os, json, time, subprocess, socket, threading
sys.path.insert(0, "/work/notes/atk34")
PORT=8939; os.environ["PORT"]=str(PORT); os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"; N=int(sys.argv[1]) if len(sys.argv)>1 else 8
env=dict(os.environ, HOME=X+"/ur/home")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/ur/home/.config/mcpsandbox/policy.toml","--http","127.0.0.1:%d"%PORT,"--token-file",X+"/tok"],stderr=open(X+"/f3.log","wb"),env=env)
time.sleep(1.5)
stop=False
def slow(i, sid):
    s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096); s.connect(("127.0.0.1",PORT))
    body=json.dumps({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"big.bin"}}}).encode()
    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n"%(PORT,mcp.TOKEN.encode(),sid.encode(),len(body))+body)
    got=0
    while not stop:
        try: d=s.recv(16384)
        except Exception as e: print("slow",i,"error",e); return
        if not d: print("slow",i,"closed by serve after",got,"bytes"); return
        got+=len(d); time.sleep(5)
    print("slow",i,"still open, read",got,"bytes")
try:
    ss=[mcp.Sess() for _ in range(N)]
    ths=[threading.Thread(target=slow,args=(i,ss[i].sid),daemon=True) for i in range(N)]
    [t.start() for t in ths]
    time.sleep(4)
    v=mcp.Sess()
    for k in range(3):
        t=time.time(); st,r=v.run("wc","-c","big.bin")
        print("victim call %d after %.1fs:"%(k,time.time()-t), json.dumps(mcp.res(r))[:330]); time.sleep(20)
finally:
    stop=True; time.sleep(6); srv.terminate(); srv.wait()
