# F3 across sessions: over one `serve --http`, session B's refused calls drain the reserve; session A's running call loses its outcome.
import sys, os, json, time, subprocess, threading
sys.path.insert(0, "/work/notes/atk32")
os.environ["PORT"]="8832"; os.environ["TOK"]="atk32-token-0123456789abcdef0123"
import mcp
SM="/tmp/atk32x/small"
open("/tmp/atk32x/tok","w").write(os.environ["TOK"]); os.chmod("/tmp/atk32x/tok",0o600)
env=dict(os.environ, HOME="/tmp/atk32/home", XDG_STATE_HOME="/tmp/atk32/home/.local/state")
srv=subprocess.Popen(["/tmp/atk32/mcpsandbox","serve","--policy","/tmp/atk32x/polsmall.toml","--http","127.0.0.1:8832","--token-file","/tmp/atk32x/tok"],stderr=open("/tmp/atk32x/f3http.log","wb"),env=env)
time.sleep(1.0)
A=mcp.Sess(); B=mcp.Sess()
print("A write keep.txt:", str(A.call("write_file",{"path":"keep.txt","content":"precious\n"}))[:120])
st=os.statvfs(SM); avail=st.f_bavail*st.f_frsize
subprocess.run(["dd","if=/dev/zero","of="+SM+"/filler","bs=64k","count=%d"%(avail//65536+16)],stderr=subprocess.DEVNULL)
out={}
def runA(): out["a"]=mcp.py(A, "import time,os; time.sleep(8); os.rename('keep.txt','moved.txt'); print('renamed')", timeout=60)
t=threading.Thread(target=runA); t.start(); time.sleep(1.5)
for k in range(330): B.call("no_such_tool_%d"%k, {"pad":"A"*15000})
for size in [8000,4000,2000,1000,600,300,150,80,40,20,10,5,1]:
    for _ in range(4): B.call("no_such_tool", {"pad":"B"*size})
print("audit size", os.path.getsize(SM+"/audit.jsonl"), "allocated KiB", os.stat(SM+"/audit.jsonl").st_blocks//2)
t.join(); print("A's answer:", json.dumps(out["a"])[:500])
print("host ws:", os.listdir(SM+"/ws"))
os.remove(SM+"/filler"); srv.terminate(); srv.wait()
print(subprocess.run(["/tmp/atk32/mcpsandbox","audit","verify",SM+"/audit.jsonl"],capture_output=True,text=True))
