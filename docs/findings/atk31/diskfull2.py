import sys,json,os; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/polsmall.toml")
sz=1024*1024; i=0
while sz>=4096:
    r=sc(s.py('open("h%d","wb").write(b"x"*%d)'%(i,sz))); i+=1
    print(sz,json.dumps(r.get("workspace"))[:200]); 
    if "refused" in json.dumps(r): sz//=2
os.system("df -k /tmp/atk31x/small | tail -1; wc -l /tmp/atk31x/small/audit.jsonl")
for i in range(3):
    r=s.run("ls"); print("ls",json.dumps(r)[:200])
r=s.call("write_file",{"path":"g2","content":"y"*100}); print("wf",json.dumps(r)[:300])
r=s.py('open("g3","w").write("z")'); print("py",json.dumps(r)[:300])
os.system("wc -l /tmp/atk31x/small/audit.jsonl; tail -c 400 /tmp/atk31x/small/audit.jsonl; echo; ls -la /tmp/atk31x/small/ws | tail -4")
