# SIGTERM (graceful shutdown) while a finished call's writes are applied (30k files: commit > the 5 s grace)
import sys, time, json, os, threading, subprocess, signal
sys.path.insert(0,"/tmp/atk29x")
from mcp import *
s=Sess()
d=sys.argv[1]
out={}
def go():
    out["r"]=py(s,"import os\nos.makedirs('%s',exist_ok=True)\nfor i in range(30000): open('%s/f%%d'%%i,'w').close()\n"%(d,d))
th=threading.Thread(target=go); th.start()
seen=False
while True:
    o=subprocess.run(["pgrep","-f","exec\\(base64"],capture_output=True,text=True).stdout.split()
    if o: seen=True
    if seen and not o: break
    time.sleep(0.01)
time.sleep(0.3)
os.kill(int(open("/tmp/atk29x/serve.pid").read()), signal.SIGTERM)
th.join()
print(json.dumps(out["r"])[:400])
print("files in workspace:", len(os.listdir("/tmp/atk29x/ws/"+d)) if os.path.exists("/tmp/atk29x/ws/"+d) else 0)
