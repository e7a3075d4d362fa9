import sys, os, json, time, subprocess, http.client
sys.path.insert(0, "/work/notes/atk34")
os.environ["PORT"]="8936"; os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"; pol=sys.argv[1]; N=int(sys.argv[2])
env=dict(os.environ, HOME=X+"/home", XDG_STATE_HOME=X+"/home/.local/state")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",pol,"--http","127.0.0.1:8936","--token-file",X+"/tok"],stderr=open(X+"/fd.log","wb"),env=env)
time.sleep(1.5)
def fds(): return len(os.listdir("/proc/%d/fd"%srv.pid))
def thr(): return int([l for l in open("/proc/%d/status"%srv.pid) if l.startswith("Threads")][0].split()[1])
def rss(): return int([l for l in open("/proc/%d/status"%srv.pid) if l.startswith("VmRSS")][0].split()[1])
try:
    s=mcp.Sess(); print(json.dumps(mcp.res(s.call("run_shell_sandbox",{"script":"echo warm; env | grep -i proxy"})))[:300])
    c=http.client.HTTPConnection("127.0.0.1",8936); c.request("DELETE","/mcp",headers={"Mcp-Session-Id":s.sid,"Authorization":"Bearer "+mcp.TOKEN}); c.getresponse().read()
    time.sleep(2); f0=fds(); print("start fds",f0,"threads",thr(),"rss",rss())
    for i in range(N):
        s=mcp.Sess(); r=mcp.res(s.call("run_shell_sandbox",{"script":"echo %d"%i}))
        c=http.client.HTTPConnection("127.0.0.1",8936); c.request("DELETE","/mcp",headers={"Mcp-Session-Id":s.sid,"Authorization":"Bearer "+mcp.TOKEN}); c.getresponse().read()
    time.sleep(3); print("after %d sessions: fds"%N,fds(),"threads",thr(),"rss",rss())
    print(subprocess.run("ls -l /proc/%d/fd | awk '{print $NF}' | sed 's/[0-9]*//g' | sort | uniq -c"%srv.pid,shell=True,capture_output=True,text=True).stdout)
finally:
    srv.terminate(); srv.wait()
