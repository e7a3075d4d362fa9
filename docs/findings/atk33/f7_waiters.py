# atk32 F3 through the slot queue: calls WAITING for a slot have their "started" line too, and their outcome may use the
# reserve; the reserve is sized for max_concurrent's running calls (<=256), not for waiters (bounded only by connections).
# Session B parks N calls behind A's running call, the disk fills, B cancels them: N outcome lines drain the reserve;
# A's call then ends and its outcome line cannot be written.
import sys, os, json, time, subprocess, threading, http.client
sys.path.insert(0, "/work/notes/atk33")
os.environ["PORT"]="8847"; os.environ["TOK"]="atk33-token-0123456789abcdef0123"
import mcp
N=int(sys.argv[1]) if len(sys.argv)>1 else 700
SM="/tmp/atk33x/small"
for f in os.listdir(SM):
    if f!="ws": os.remove(os.path.join(SM,f))
for f in os.listdir(SM+"/ws"): os.remove(os.path.join(SM+"/ws",f))
open("/tmp/atk33x/tok","w").write(os.environ["TOK"]); os.chmod("/tmp/atk33x/tok",0o600)
env=dict(os.environ, HOME="/tmp/atk33/home", XDG_STATE_HOME="/tmp/atk33/home/.local/state")
srv=subprocess.Popen(["/tmp/atk33/mcpsandbox","serve","--policy","/tmp/atk33x/polsmall.toml","--http","127.0.0.1:8847","--token-file","/tmp/atk33x/tok"],stderr=open("/tmp/atk33x/f7.log","wb"),env=env)
time.sleep(1.0)
A=mcp.Sess(); B=mcp.Sess()
print("A write keep.txt:", str(A.call("write_file",{"path":"keep.txt","content":"precious\n"}))[:100])
out={}
def runA(): out["a"]=mcp.py(A, "import time,os; time.sleep(14); os.rename('keep.txt','moved.txt'); print('renamed')", timeout=90)
t=threading.Thread(target=runA); t.start(); time.sleep(1.0)
SIZES=[15500]*N+[s for s in [8000,4000,2000,1000,500,250,120,60,30,15,8,4,2,1] for _ in range(4)]
def waiter(i):
    try: B.post({"jsonrpc":"2.0","id":1000+i,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"cat","args":["W"*SIZES[i]]}}},timeout=90)
    except Exception as e: pass
ths=[threading.Thread(target=waiter,args=(i,),daemon=True) for i in range(len(SIZES))]
for th in ths: th.start(); time.sleep(0.002)
time.sleep(3)
print("after %d waiters: audit size %d, allocated KiB %d" % (N, os.path.getsize(SM+"/audit.jsonl"), os.stat(SM+"/audit.jsonl").st_blocks//2))
st=os.statvfs(SM); avail=st.f_bavail*st.f_frsize
subprocess.run(["dd","if=/dev/zero","of="+SM+"/filler","bs=64k","count=%d"%(avail//65536+16)],stderr=subprocess.DEVNULL)
print("disk filled; free bytes:", os.statvfs(SM).f_bavail*os.statvfs(SM).f_frsize)
for i in range(len(SIZES)):
    B.post({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1000+i,"reason":"x"}})
time.sleep(2)
print("after cancels: audit size %d, allocated KiB %d" % (os.path.getsize(SM+"/audit.jsonl"), os.stat(SM+"/audit.jsonl").st_blocks//2))
t.join(); print("A's answer:", json.dumps(out["a"])[:600])
print("host ws:", os.listdir(SM+"/ws"))
os.remove(SM+"/filler"); srv.terminate(); srv.wait()
lines=[json.loads(l) for l in open(SM+"/audit.jsonl")]
from collections import Counter
print("audit decisions:", Counter((l.get("session","")[:6], l["decision"]) for l in lines))
print(subprocess.run(["/tmp/atk33/mcpsandbox","audit","verify",SM+"/audit.jsonl"],capture_output=True,text=True))
