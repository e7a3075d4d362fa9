#!/usr/bin/env python3
"""atk39 F7: README: "A watchdog in each container holds its attached stdin: if serve dies, even by SIGKILL,
everything in the container is killed at once". The watchdog runs as the program's uid in the program's
pid namespace: the program kills it first; serve is then SIGKILLed mid-call; the container and the
program's processes keep running (until a later serve's start reaps them, if one ever starts)."""
import os, sys, time, json, signal, subprocess, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
s = Stdio(["/tmp/atk39/mcpsandbox", "serve", "--policy", "/tmp/atk39/http1.toml"], env={"HOME": "/tmp/atk39/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk39/f7.serve.log")
script = r'''
for p in /proc/[0-9]*; do c=$(tr '\0' ' ' < $p/cmdline 2>/dev/null); case "$c" in *python3" -I -S -c"*) echo "killing watchdog ${p#/proc/}: ${c%%import*}"; kill -9 ${p#/proc/};; esac; done
(trap '' HUP TERM; while :; do sleep 1; done) </dev/null >/dev/null 2>&1 &
sleep 300
'''
res = {}
threading.Thread(target=lambda: res.setdefault("r", s.call("run_shell_sandbox", {"script": script})), daemon=True).start()
time.sleep(4)
print("call result so far:", text(res["r"])[:400] if "r" in res else "(running)")
print("containers before SIGKILL:", subprocess.run(["docker", "ps", "--format", "{{.Names}} {{.Status}}"], capture_output=True, text=True).stdout.strip())
os.kill(s.p.pid, signal.SIGKILL); s.p.wait()
print("serve SIGKILLed")
for t in (3, 15, 60):
    time.sleep({3: 3, 15: 12, 60: 45}[t])
    out = subprocess.run(["docker", "ps", "--format", "{{.Names}} {{.Status}}"], capture_output=True, text=True).stdout.strip()
    print("t+%ds containers:" % t, out or "(none)")
    for name in out.split("\n"):
        if name:
            top = subprocess.run(["docker", "top", name.split()[0], "-o", "pid,args"], capture_output=True, text=True).stdout.strip().replace("\n", " | ")
            print("   processes:", top[-260:])
# cleanup: a new serve's start reaps containers of dead instances
r = Stdio(["/tmp/atk39/mcpsandbox", "serve", "--policy", "/tmp/atk39/http1.toml"], env={"HOME": "/tmp/atk39/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk39/f7.serve2.log")
time.sleep(3); r.close()
print("after a new serve started:", subprocess.run(["docker", "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True).stdout.strip() or "(none)")
