import sys,json,time; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
def rss(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return int(l.split()[1])
s=Stdio("/tmp/atk31x/pol.toml")
print("rss0",rss(s.p.pid))
N=int(sys.argv[1])
buf=[]
for i in range(N):
    buf.append(json.dumps({"jsonrpc":"2.0","id":100000+i,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"python3.11","args":["-c","import time;time.sleep(20)"]},"_meta":{"progressToken":"p%d"%i+"x"*1000}}}))
t=time.time()
s.p.stdin.write(("\n".join(buf)+"\n").encode()); s.p.stdin.flush()
print("sent",time.time()-t)
for k in range(6):
    time.sleep(2); print("rss",rss(s.p.pid), "threads", open(f"/proc/{s.p.pid}/status").read().split("Threads:")[1].split()[0])
t=time.time(); r=s.req("ping",{},30); print("ping",r and r.get("result"),time.time()-t)
# cancel all
for i in range(N): s.cancel(100000+i)
time.sleep(3); print("after cancel rss",rss(s.p.pid))
import subprocess; print(subprocess.run("ps -u 65534 | wc -l",shell=True,capture_output=True,text=True).stdout)
