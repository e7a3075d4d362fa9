import sys; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
s=Stdio("/tmp/atk31x/pol.toml")
for n,depth in enumerate([100,9990,10001,20000]):
    d="["*depth+"]"*depth; i=5000+n
    s.p.stdin.write(('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls","args":%s}}}\n'%(i,d)).encode()); s.p.stdin.flush()
    r=s.wait(i,8); print(depth,str(r)[:250])
# also: a plain syntax error line with id
s.p.stdin.write(b'{"jsonrpc":"2.0","id":7000,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls"}}\n'); s.p.stdin.flush()
print("syntax",str(s.wait(7000,5))[:200])
print("ping",str(s.req("ping",{},5))[:100])
