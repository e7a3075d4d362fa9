import sys,json,base64; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/dpol.toml")
tl=s.req("tools/list",{}); tools=[t["name"] for t in tl["result"]["tools"]]; print(tools)
t=[x for x in tl["result"]["tools"] if "run" in x["name"]][0]; print(json.dumps(t["inputSchema"])[:300])
exec(open("/work/notes/atk31/prot.py").read().split("names=")[1].split("\n")[0].join(["names=",""]))
code="import os\nfor n in %r:\n  d=os.path.dirname(n)\n  d and os.makedirs(d,exist_ok=True)\n  open(n,'w').write('x')\n"%names
r=s.call("run_python_sandbox",{"code":code})
print(json.dumps(sc(r))[:300])
