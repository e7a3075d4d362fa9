# Another session's big commits hold the workspace lock past the victim's commit deadline:
# the victim's finished call's writes are dropped and its result withheld.
import sys, time, json, os, threading
sys.path.insert(0,"/tmp/atk29x")
from mcp import *
N=int(sys.argv[1]) if len(sys.argv)>1 else 20000
att=Sess(); vic=Sess()
out={}
def attacker(k, delay):
    time.sleep(delay)
    t=time.time()
    r=py(att,'''
import os
d='big%d_%d'
os.makedirs(d,exist_ok=True)
for i in range(%d): open(d+'/f%%d'%%i,'w').close()
'''%(k,int(time.time()),N))
    out["a%d"%k]=(time.time()-t, json.dumps(res_(r))[:300])
def res_(r):
    x=res(r[1])
    return x
ths=[threading.Thread(target=attacker,args=(k,0.4*k)) for k in range(3)]
for t in ths: t.start()
time.sleep(3.0)
t=time.time()
r=vic.run("tee","victim-output.txt")  # stdin empty: creates an empty file; simple write
# a more visible victim: python writing a result
r=py(vic,"open('victim-result.txt','w').write('important result\\n');print('done')")
out["victim"]=(time.time()-t, json.dumps(r[1])[:600])
for t in ths: t.join()
for k,v in sorted(out.items()): print(k, "%.1fs"%v[0], v[1])
print("victim file landed:", os.path.exists("/tmp/atk29x/ws2/victim-result.txt"))
