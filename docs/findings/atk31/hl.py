import sys,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
print(json.dumps(sc(s.run("ln","CLAUDE.md","x")))[:600])
print(json.dumps(sc(s.run("ln",".git/hooks/pre-commit","y")))[:600])
print(json.dumps(sc(s.py("import os;os.link('CLAUDE.md','z');open('z','a').write('PWN');print(open('CLAUDE.md').read())")))[:600])
print(json.dumps(sc(s.py("open('x','a').write('PWN2')")))[:600])
print(json.dumps(sc(s.call("write_file",{"path":"x","content":"PWN3"})))[:600])
