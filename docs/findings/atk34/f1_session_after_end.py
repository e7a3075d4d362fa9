# docker reuse=session over HTTP: a call queued behind max_concurrent when its session is DELETEd
# re-tracks the ended session and gets a container no session end will ever remove.
import sys, os, json, time, subprocess, threading, http.client
sys.path.insert(0, "/work/notes/atk34")
os.environ["PORT"]="8934"; os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"
env=dict(os.environ, HOME=X+"/home", XDG_STATE_HOME=X+"/home/.local/state")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/sess.toml","--http","127.0.0.1:8934","--token-file",X+"/tok"],stderr=open(X+"/f1.log","wb"),env=env)
time.sleep(1.5)
def ps():
    return subprocess.run(["docker","ps","--filter","label=dev.mcpsandbox.instance","--format","{{.ID}} {{.Status}} {{.Labels}}"],capture_output=True,text=True).stdout
A=mcp.Sess(); B=mcp.Sess()
print("A sid", A.sid, "B sid", B.sid)
out={}
def runA(): out["a"]=A.call("run_shell_sandbox",{"script":"sleep 6; echo A-done"},timeout=90)
def runB(): 
    try: out["b"]=B.call("run_python_sandbox",{"code":"import os;print('B ran', os.getpid())"},timeout=90)
    except Exception as e: out["b"]=repr(e)
ta=threading.Thread(target=runA); ta.start(); time.sleep(2)
tb=threading.Thread(target=runB); tb.start(); time.sleep(1)
# end session B while its call waits for the slot
c=http.client.HTTPConnection("127.0.0.1",8934); c.request("DELETE","/mcp",headers={"Mcp-Session-Id":B.sid,"Authorization":"Bearer "+mcp.TOKEN}); r=c.getresponse(); print("DELETE B:", r.status); r.read()
ta.join(); tb.join()
print("A:", json.dumps(mcp.res(out["a"]))[:200])
print("B:", json.dumps(mcp.res(out["b"]) if not isinstance(out["b"],str) else out["b"])[:300])
time.sleep(2)
print("containers now (A's session + ?):\n"+ps())
A2=mcp.Sess(); C=mcp.Sess()
print("new session C's first call:", json.dumps(mcp.res(C.call("run_python_sandbox",{"code":"print('C ran')"})))[:400])
print("containers:\n"+ps())
srv.terminate(); srv.wait()
time.sleep(1); print("after serve stop:\n"+ps())
