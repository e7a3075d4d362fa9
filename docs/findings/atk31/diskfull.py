import sys,json,os; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/polsmall.toml")
for i in range(4):
    r=sc(s.py('open("f%d","wb").write(b"x"*3*1024*1024)'%i)); print(i,json.dumps(r)[:300])
    os.system("df -k /tmp/atk31x/small | tail -1; wc -l /tmp/atk31x/small/audit.jsonl")
# now audit has no room: make calls
for i in range(3):
    r=s.run("ls"); print("ls",json.dumps(r)[:400])
r=s.call("write_file",{"path":"g","content":"y"*1000}); print("wf",json.dumps(r)[:400])
os.system("wc -l /tmp/atk31x/small/audit.jsonl; tail -c 300 /tmp/atk31x/small/audit.jsonl; ls -la /tmp/atk31x/small/ws")
