import sys,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
code='''
import os
os.makedirs("M",exist_ok=True); os.chdir("M")
for i in range(40):
    n="e"*250; os.mkdir(n); os.chdir(n)
open("CLAUDE.md","w").write("deep")
os.makedirs(".git/hooks"); open(".git/hooks/pre-commit","w").write("#!/bin/sh\\n")
os.makedirs(".vscode"); open(".vscode/tasks.json","w").write("{}")
os.makedirs("bare/objects"); os.makedirs("bare/refs"); open("bare/HEAD","w").write("ref: refs/heads/main\\n")
os.chdir("/tmp")
'''
print(json.dumps(sc(s.py(code)))[:3000])
