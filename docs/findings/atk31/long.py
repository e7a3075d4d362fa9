import sys,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
code='''
import os
os.makedirs("L",exist_ok=True); os.chdir("L")
for i in range(40):
    n="d"*200; os.mkdir(n); os.chdir(n)
open("leaf.txt","w").write("deep")
os.chdir("/tmp")
'''
print(json.dumps(sc(s.py(code)))[:1500])
print(json.dumps(sc(s.call("list_files",{"path":"L"})))[:500])
