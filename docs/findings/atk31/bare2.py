import sys,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
print(json.dumps(sc(s.py('import os;os.makedirs("b2/objects");os.makedirs("b2/refs")')))[:700])
print(json.dumps(sc(s.py('open("b2/HEAD","w").write("ref: refs/heads/main\\n")')))[:700])
print(json.dumps(sc(s.call("write_file",{"path":"b3/HEAD","content":"ref: refs/heads/main\n"})))[:700])
print(json.dumps(sc(s.py('import os;os.makedirs("b3/objects");os.makedirs("b3/refs")')))[:700])
print(json.dumps(sc(s.py('import os;os.makedirs("b4/objects");os.makedirs("b4/refs");os.symlink("../CLAUDE.md","b4/HEAD")')))[:700])
