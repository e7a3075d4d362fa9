# docker reuse="session", docker.max_sessions = 2: two idle sessions hold both places; then N newcomers
# call at once. Count serve's containers on the engine every ~30 ms during the evictions.
import sys, os, json, time, subprocess, threading
sys.path.insert(0, "/work/notes/atk34b")
os.environ["PORT"]="8936"; os.environ["TOK"]="atk34b-token-0123456789abcdef012"
import mcp
CAP=3
N=int(sys.argv[1]) if len(sys.argv)>1 else 2
X="/tmp/atk34bx"
env=dict(os.environ, HOME=X+"/home", XDG_STATE_HOME=X+"/home/.local/state")
srv=subprocess.Popen(["/tmp/atk34b/mcpsandbox","serve","--policy",X+"/sess2.toml","--http","127.0.0.1:8936","--token-file",X+"/tok"],stderr=open(X+"/f2.log","wb"),env=env)
time.sleep(1.5)
def count():
    return len(subprocess.run(["docker","ps","-q","--filter","label=dev.mcpsandbox.pid=%d"%srv.pid],capture_output=True,text=True).stdout.split())
try:
    for i in range(CAP):
        s=mcp.Sess(); print("idle", i, json.dumps(mcp.res(s.call("run_python_sandbox",{"code":"print('idle %d')"%i})))[:60])
    time.sleep(1); print("baseline containers:", count())
    ev=subprocess.Popen(["docker","events","--filter","label=dev.mcpsandbox.pid=%d"%srv.pid,"--filter","type=container","--format","{{.Action}} {{.Actor.ID}} {{.TimeNano}}"],stdout=subprocess.PIPE,text=True)
    peak=[0]; stop=[False]
    def poll():
        while not stop[0]:
            peak[0]=max(peak[0],count()); time.sleep(0.03)
    pt=threading.Thread(target=poll); pt.start()
    out={}
    def nc(k):
        v=mcp.Sess(); t=time.time(); r=v.call("run_python_sandbox",{"code":"import time; time.sleep(3); print('new %d')"%k}); out[k]=(time.time()-t, json.dumps(mcp.res(r))[:160])
    ts=[threading.Thread(target=nc,args=(k,)) for k in range(N)]
    [t.start() for t in ts]; [t.join() for t in ts]
    time.sleep(0.5); stop[0]=True; pt.join()
    time.sleep(1); ev.terminate(); evs=ev.stdout.read().split("\n")
    base=CAP; cur=base; pk=base; seq=[]
    for l in evs:
        p=l.split()
        if len(p)<3: continue
        if p[0]=="start": cur+=1
        elif p[0]=="destroy": cur-=1
        else: continue
        seq.append("%s %s ->%d"%(p[0],p[1][:8],cur)); pk=max(pk,cur)
    print("engine events (start/destroy):", "; ".join(seq)); print("peak by events:", pk)
    for k in sorted(out): print("newcomer",k,"%.1fs"%out[k][0],out[k][1])
    print("peak containers of serve on the engine during the evictions:", peak[0], "(docker.max_sessions = 2)")
    print("after:", count())
finally:
    srv.terminate(); srv.wait()
