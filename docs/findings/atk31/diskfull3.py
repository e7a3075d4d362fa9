import sys,json,os,time; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/polsmall.toml")
for k in range(12):
    st=os.statvfs("/tmp/atk31x/small"); avail=st.f_bavail*st.f_frsize
    asz=os.path.getsize("/tmp/atk31x/small/audit.jsonl")
    print("avail",avail,"audit size",asz,"slack",(-asz)%4096)
    if avail==0:
        # make the audit's last page full by a call whose line is just long enough? use padding in args
        pad=((-asz)%4096)
        r=s.req("tools/call",{"name":"run_allowed_command","arguments":{"command":"ls","args":["--", "x"*max(1,pad-1300)]}},30)
        print(" pad call",json.dumps(r)[:200]); continue
    i=s.start("tools/call",{"name":"run_allowed_command","arguments":{"command":"python3.11","args":["-c",'open("k%d","wb").write(b"x"*%d)'%(k,avail)]}})
    r=s.wait(i,30); print(k," result",json.dumps(r)[:300])
    print(" on disk k%d:"%k, os.path.exists("/tmp/atk31x/small/ws/k%d"%k))
