import sys,json,time; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
b=[{"jsonrpc":"2.0","id":9000+i,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls"}}} for i in range(3)]
s.p.stdin.write((json.dumps(b)+"\n").encode()); s.p.stdin.flush()
for i in range(3): print(str(s.wait(9000+i,5))[:200])
# notification flood: progress + cancelled for unknown + roots/list_changed
t=time.time()
for i in range(50000):
    s.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}\n')
s.p.stdin.flush(); print("flood sent",time.time()-t)
t=time.time(); print(str(s.req("ping",{},30))[:80], time.time()-t)
