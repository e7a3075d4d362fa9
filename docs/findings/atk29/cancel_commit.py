# F: a client's cancel during the commit: changes land, the answer and audit say "cancelled"
import sys, time, json, os
sys.path.insert(0,"/tmp/atk29x")
from stdio import *
s=Stdio(sys.argv[1] if len(sys.argv)>1 else "pol.toml")
d=sys.argv[2] if len(sys.argv)>2 else "many"
t0=time.time()
i=s.pycall_start('''
import os,time
t=time.time()
os.makedirs('%s',exist_ok=True)
for i in range(20000): open('%s/f%%d'%%i,'w').write('x')
'''%(d,d))
# find when the program exits: watch for the python process to go away
import subprocess
seen=False
while True:
    out=subprocess.run(["pgrep","-f","exec\\(base64"],capture_output=True,text=True).stdout.split()
    if out: seen=True
    if seen and not out: break
    time.sleep(0.01)
t1=time.time()
time.sleep(0.3)
s.cancel(i)
r=s.wait(i)
t2=time.time()
print("program ran %.2fs; cancel sent %.2fs after it exited; answered %.2fs later"%(t1-t0,0.3,t2-t1-0.3))
print(json.dumps(r)[:600])
print("files in workspace:", len(os.listdir("/tmp/atk29x/ws/"+d)) if os.path.exists("/tmp/atk29x/ws/"+d) else 0)
