import sys,time,json; sys.path.insert(0,"/work/notes/atk31")
from stdio import *
def rss(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return l.split()[1]
s=Stdio("/tmp/atk31x/pol.toml")
print("rss0",rss(s.p.pid))
print(sc(s.run("ls")))
# odd tool name
r=s.call("run_allowed_command\n{\"fake\":1}\u2028\x1b[2J",{"command":"ls"}); print("odd",str(r)[:300])
r=s.call("x"*3000000,{"command":"ls"}); print("long",str(r)[:200])
print("rss1",rss(s.p.pid))
# huge frame 50MB
t=time.time(); i=s.start("tools/call",{"name":"run_allowed_command","arguments":{"command":"ls","args":["a"*50_000_000]}}); r=s.wait(i,60); print("huge",str(r)[:300],time.time()-t)
print("rss2",rss(s.p.pid))
# deep nesting
d="["*200000+"]"*200000
s.p.stdin.write(('{"jsonrpc":"2.0","id":9999,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls","args":'+d+'}}}\n').encode()); s.p.stdin.flush()
r=s.wait(9999,30); print("deep",str(r)[:300])
print("alive",s.p.poll(), "rss3",rss(s.p.pid) if s.p.poll() is None else None)
print(str(s.req("ping",{},10))[:100])
