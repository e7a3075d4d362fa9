# two concurrent calls: one writes gN/HEAD, the other gN/objects + gN/refs; do both land (a bare repo the check forbids)?
import sys,json,time; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
for n in range(8):
    T=time.time()+1.5
    a=s.pycall_start('import time,os;time.sleep(max(0,%f-time.time()));os.makedirs("g%d",exist_ok=True);open("g%d/HEAD","w").write("ref: refs/heads/main\\n")'%(T,n,n))
    b=s.pycall_start('import time,os;time.sleep(max(0,%f-time.time()));os.makedirs("g%d/objects");os.makedirs("g%d/refs")'%(T,n,n))
    ra=sc(s.wait(a)); rb=sc(s.wait(b))
    print(n,json.dumps(ra.get("workspace")),json.dumps(rb.get("workspace"))[:200])
