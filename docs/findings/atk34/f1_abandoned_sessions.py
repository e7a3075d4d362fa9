# docker reuse=session over serve --http with the defaults (docker.max_sessions = 4, docker.session_idle = 10m,
# limits.max_sessions = 64): four sessions that made one call each and were abandoned (no DELETE, as a client that
# crashes or is closed) keep every docker session place; every other session is refused for 10 minutes, although
# the HTTP layer itself would evict those idle sessions to admit a new one.
import sys, os, json, time, subprocess
sys.path.insert(0, "/work/notes/atk34")
os.environ["PORT"]="8935"; os.environ["TOK"]="atk34-token-0123456789abcdef0123"
import mcp
X="/tmp/atk34x"
env=dict(os.environ, HOME=X+"/home", XDG_STATE_HOME=X+"/home/.local/state")
srv=subprocess.Popen(["/tmp/atk34/mcpsandbox","serve","--policy",X+"/sess4.toml","--http","127.0.0.1:8935","--token-file",X+"/tok"],stderr=open(X+"/f1b.log","wb"),env=env)
time.sleep(1.5)
try:
    for i in range(4):
        s=mcp.Sess(); r=mcp.res(s.call("run_python_sandbox",{"code":"print('abandoned %d')"%i}))
        print("abandoned session", i, s.sid[:8], json.dumps(r)[:80])
    # the victim: another client, a fresh session
    t0=time.time()
    for k in range(3):
        v=mcp.Sess(); r=v.call("run_python_sandbox",{"code":"print('victim')"})
        print("victim t+%.0fs:"%(time.time()-t0), json.dumps(mcp.res(r))[:420])
        time.sleep(20)
    print("session containers:", subprocess.run("docker ps -q --filter label=dev.mcpsandbox.pid=%d | wc -l"%srv.pid,shell=True,capture_output=True,text=True).stdout.strip())
finally:
    srv.terminate(); srv.wait()
