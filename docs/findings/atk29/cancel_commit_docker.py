# F1 on the docker scheme: cancel after the shell script exits, while serve removes the container and commits
import sys, time, json, os, subprocess
sys.path.insert(0,"/tmp/atk29x")
from stdio import *
s=Stdio("/tmp/atk29x/dpol.toml")
d=sys.argv[1] if len(sys.argv)>1 else "manyd"
t0=time.time()
i=s.start("tools/call",{"name":"run_python_sandbox","arguments":{"code":
 "import os,time\nos.makedirs('/workspace/%s',exist_ok=True)\nfor i in range(20000): open('/workspace/%s/f%%d'%%i,'w').close()\nprint('END-MARK-X',flush=True)\n"%(d,d)}})
# wait until the program is done: its container's python is gone (container still there)
seen=False
while True:
    o=subprocess.run(["pgrep","-u","65534","-f","python3"],capture_output=True,text=True).stdout.split()
    if o: seen=True
    if seen and not o: break
    if time.time()-t0>60: break
    time.sleep(0.01)
t1=time.time()
time.sleep(0.2)
s.cancel(i)
r=s.wait(i)
print("program done after %.2fs; cancel 0.2s later; answer %.2fs after cancel"%(t1-t0, time.time()-t1-0.2))
print(json.dumps(r)[:500])
print("files in workspace:", len(os.listdir("/tmp/atk29x/dws/"+d)) if os.path.exists("/tmp/atk29x/dws/"+d) else 0)
