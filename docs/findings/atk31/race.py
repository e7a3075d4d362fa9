import sys,json,time; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
a=s.pycall_start('import time,os;time.sleep(2);open("d/new","w").write("A");open("d/keep","a").write("A")')
time.sleep(0.5)
print("B",json.dumps(sc(s.py('import shutil;shutil.rmtree("d");open("d","w").write("B-file")')))[:800])
print("A",json.dumps(sc(s.wait(a)))[:1200])
