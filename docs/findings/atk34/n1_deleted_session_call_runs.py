# serve --http, allowlist (sleep, touch), max_concurrent = 1. Session B's call waits for the slot behind A's;
# B's client ends its session (DELETE, 204). B's call still runs once the slot frees, and writes the workspace.
import sys, os, json, time, subprocess, threading, http.client
sys.path.insert(0, "/work/notes/atk34")
PORT=8943; os.environ["PORT"]=str(PORT); os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x/n1"
env=dict(os.environ, HOME=X+"/home")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/home/.config/mcpsandbox/policy.toml","--http","127.0.0.1:%d"%PORT,"--token-file","/tmp/atk34x/tok"],stderr=open(X+"/serve.log","wb"),env=env)
time.sleep(1.5)
try:
    A=mcp.Sess(); B=mcp.Sess(); out={}
    ta=threading.Thread(target=lambda: out.setdefault("a",A.run("sleep","5"))); ta.start(); time.sleep(1)
    tb=threading.Thread(target=lambda: out.setdefault("b",B.run("touch","written-after-session-ended.txt"))); tb.start(); time.sleep(1)
    t0=time.time(); c=http.client.HTTPConnection("127.0.0.1",PORT); c.request("DELETE","/mcp",headers={"Mcp-Session-Id":B.sid,"Authorization":"Bearer "+mcp.TOKEN}); r=c.getresponse(); r.read()
    print("DELETE of B sent at t=2s: %d after %.1fs; workspace then:"%(r.status,time.time()-t0), os.listdir(X+"/ws"))
    ta.join(); tb.join()
    print("B's POST got:", out["b"])
    print("workspace after:", os.listdir(X+"/ws"))
finally:
    srv.terminate(); srv.wait()
for l in open(X+"/audit.jsonl"):
    d=json.loads(l); print("audit:", d["time"][11:23], d.get("session","")[:8], d.get("tool"), d.get("decision"), json.dumps(d.get("arguments"))[:60])
