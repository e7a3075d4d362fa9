# F7 on the docker scheme, small (at most N x 63 MiB on the real /var/tmp, removed with the layer): how much lands before the 50 ms watchdog
import sys, json, time
sys.path.insert(0, "/work/notes/atk32")
import stdio
N = int(sys.argv[1]) if len(sys.argv) > 1 else 40
s = stdio.Stdio("/tmp/atk32x/dpol.toml")
code = r'''
import os, time
t=time.time(); i=0
try:
    while i < %d:
        fd=os.open("/workspace/f%%d"%%i, os.O_CREAT|os.O_WRONLY, 0o644); os.posix_fallocate(fd, 0, 63<<20); os.close(fd); i+=1
        if i %% 10 == 0: print(i, "files,", i*63, "MiB in", round(time.time()-t,4), "s", flush=True)
except Exception as e: print("stopped:", e, flush=True)
print("done", i, round(time.time()-t,4), flush=True)
time.sleep(2)
''' % N
r = s.call("run_python_sandbox", {"code": code})
st = stdio.sc(r)
print(json.dumps({k: st.get(k) for k in ("exit_code","timed_out","workspace")})[:500]); print(st.get("stdout"), st.get("stderr","")[:300])
