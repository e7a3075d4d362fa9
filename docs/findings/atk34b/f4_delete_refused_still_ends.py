# serve --http, allowlist, max_concurrent = 1. Session B sends a DELETE that the SDK refuses (400: an unsupported
# Mcp-Protocol-Version). deleteEnds has already marked B ending: B stays live, but its calls that wait for a slot are
# refused, then and afterwards.
import sys, os, json, time, subprocess, threading, http.client
sys.path.insert(0, "/work/notes/atk34b")
PORT=8944; os.environ["PORT"]=str(PORT); os.environ["TOK"]="atk34b-token-0123456789abcdef012"
import mcp
X="/tmp/atk34bx/n1"
env=dict(os.environ, HOME=X+"/home")
srv=subprocess.Popen(["/tmp/atk34b/mcpsandbox","serve","--policy",X+"/policy.toml","--http","127.0.0.1:%d"%PORT,"--token-file","/tmp/atk34bx/tok"],stderr=open(X+"/serve.log","wb"),env=env)
time.sleep(1.5)
def txt(r): return json.dumps(mcp.res(r[1]))[:200]
try:
    A=mcp.Sess(); B=mcp.Sess(); out={}
    ta=threading.Thread(target=lambda: out.setdefault("a",A.run("sleep","3"))); ta.start(); time.sleep(0.7)
    tb=threading.Thread(target=lambda: out.setdefault("b",B.run("touch","b1.txt"))); tb.start(); time.sleep(0.7)
    c=http.client.HTTPConnection("127.0.0.1",PORT); c.request("DELETE","/mcp",headers={"Mcp-Session-Id":B.sid,"Authorization":"Bearer "+mcp.TOKEN,"Mcp-Protocol-Version":"1900-01-01"}); r=c.getresponse(); body=r.read()
    print("B's DELETE (bad protocol version):", r.status, body[:80])
    ta.join(); tb.join()
    print("B's queued call:", txt(out["b"]))
    print("B's next call, slot free:", txt(B.run("touch","b2.txt")))
    ta=threading.Thread(target=lambda: out.__setitem__("a",A.run("sleep","3"))); ta.start(); time.sleep(0.7)
    print("B's next call, slot busy 2 s more:", txt(B.run("touch","b3.txt"))); ta.join()
    C=mcp.Sess(); ta=threading.Thread(target=lambda: out.__setitem__("a",A.run("sleep","3"))); ta.start(); time.sleep(0.7)
    print("control: fresh session C, slot busy:", txt(C.run("touch","c.txt"))); ta.join()
    print("workspace:", sorted(os.listdir(X+"/ws")))
finally:
    srv.terminate(); srv.wait()
