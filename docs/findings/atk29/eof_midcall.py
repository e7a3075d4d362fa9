# client closes stdin while a call runs / while its commit runs
import sys, time, json, os, subprocess
sys.path.insert(0,"/tmp/atk29x")
from stdio import *
s=Stdio("pol.toml")
i=s.py_start=None
b=base64.b64encode(b"import time,os\nopen('eof-before','w').write('x')\ntime.sleep(3)\nopen('eof-after','w').write('x')\nos.makedirs('eofmany',exist_ok=True)\nfor i in range(20000): open('eofmany/f%d'%i,'w').close()\n").decode()
i=s.start("tools/call",{"name":"run_allowed_command","arguments":{"command":"python3.11","args":["-c","import base64;exec(base64.b64decode('%s'))"%b]}})
time.sleep(float(sys.argv[1]))
s.p.stdin.close()
t=time.time()
s.p.wait()
print("serve exited %.2fs after EOF, rc=%s"%(time.time()-t, s.p.returncode))
time.sleep(0.5)
print("left processes:", subprocess.run(["pgrep","-u","65534","-a","python3"],capture_output=True,text=True).stdout)
print([n for n in os.listdir("ws") if n.startswith("eof")], len(os.listdir("ws/eofmany")) if os.path.exists("ws/eofmany") else 0)
