# docker per call, network = ["example.com"], limits.max_concurrent = 10 (allowed: 1..256), egress_connections default 32:
# nine calls (nine HTTP sessions of one token client) each hold their 32 proxy connections idle (re-opened when the
# 10 s head timeout closes them); the serve-wide bound max(256, 4 x 32) = 256 is then full, and a tenth call of
# another session gets 503 from the proxy at its first request: "other sandboxes unaffected" does not hold.
import sys, os, json, time, subprocess, threading
sys.path.insert(0, "/work/notes/atk34")
os.environ["PORT"]="8937"; os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"
HOGS=int(sys.argv[1]) if len(sys.argv)>1 else 9
env=dict(os.environ, HOME=X+"/home", XDG_STATE_HOME=X+"/home/.local/state")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/egcap.toml","--http","127.0.0.1:8937","--token-file",X+"/tok"],stderr=open(X+"/f2.log","wb"),env=env)
time.sleep(1.5)
HOG=r'''
import socket, time, threading
held=[None]*32
def keep(i):
    end=time.time()+30
    while time.time()<end:
        try:
            s=socket.create_connection(("127.0.0.1",3128)); s.settimeout(40)
            d=s.recv(1)   # returns when the proxy closes it (head timeout) or answers (503)
            if d: print("conn",i,"got",d+s.recv(200)[:60]); time.sleep(0.5)
        except Exception as e: time.sleep(0.2)
ts=[threading.Thread(target=keep,args=(i,)) for i in range(32)]
[t.start() for t in ts]; [t.join() for t in ts]
print("hog done")
'''
VICTIM=r'''
import socket
s=socket.create_connection(("127.0.0.1",3128)); s.settimeout(15)
s.sendall(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
print("victim got:", s.recv(300).decode(errors="replace").splitlines()[:1], flush=True)
'''
try:
    hs=[mcp.Sess() for _ in range(HOGS)]
    out={}
    def hog(i): out[i]=hs[i].call("run_python_sandbox",{"code":HOG},timeout=90)
    ths=[threading.Thread(target=hog,args=(i,)) for i in range(HOGS)]
    [t.start() for t in ths]
    time.sleep(12)
    v=mcp.Sess()
    for k in range(2):
        r=mcp.res(v.call("run_python_sandbox",{"code":VICTIM},timeout=60))
        print("victim call %d:"%k, (r.get("stdout") if isinstance(r,dict) else r), (r.get("stderr","")[-200:] if isinstance(r,dict) else ""))
        time.sleep(3)
    [t.join() for t in ths]
    print("hog 0 stdout tail:", json.dumps(mcp.res(out[0]))[-300:])
finally:
    srv.terminate(); srv.wait()
print(open(X+"/f2.log").read()[-1500:])
