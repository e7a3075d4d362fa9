#!/usr/bin/env python3
"""F8: atk39 F7's fix made the watchdog the container's main process, "which the program can kill only by ending
its container". The program can still SIGSTOP it (same uid, same pid namespace; SIGSTOP cannot be caught): the
watchdog neither exits nor acts, so docker-init does not end the container; serve is then SIGKILLed mid-call and the
container and the program's processes run on past the call's limits.timeout (until some later serve reaps them).
With MODE=session (docker.reuse = "session") the supervisor, which watches the attached stdin there, is stopped
likewise (every python3 process of the container). Docker, image mcpsandbox-test:bookworm, short; a new serve's
start reaps the container at the end."""
import os, sys, time, signal, subprocess, threading
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
MODE = os.environ.get("MODE", "call")
D = "/tmp/atk39b/f8" + ("s" if MODE == "session" else ""); os.makedirs(D + "/home", exist_ok=True)
open(D + "/pol.toml", "w").write('''version = 1
scheme = "docker"
name = "sandbox"
[limits]
max_concurrent = 1
timeout = "20s"
[audit]
path = "%s/audit.jsonl"
[docker]
image = "mcpsandbox-test:bookworm"
network = "none"
%s''' % (D, 'reuse = "session"\n' if MODE == "session" else "")); os.chmod(D + "/pol.toml", 0o600)
ENV = {"HOME": D + "/home", "PATH": "/usr/bin:/bin"}
def ps():
    # this run's containers only (the CI may run others): those running the call's `sleep 300`
    out = []
    for l in subprocess.run(["docker", "ps", "--filter", "label=dev.mcpsandbox", "--format", "{{.Names}} {{.Status}}"], capture_output=True, text=True).stdout.strip().splitlines():
        top = subprocess.run(["docker", "top", l.split()[0], "-o", "pid,args"], capture_output=True, text=True).stdout
        if "sleep 300" in top:
            out.append(l)
    return "\n".join(out)
before = set(l.split()[0] for l in ps().splitlines() if l)
s = Stdio(["/tmp/atk39b/mcpsandbox", "serve", "--policy", D + "/pol.toml"], env=ENV, err=D + "/serve.log")
script = ("MODE=%s\n" % MODE) + r'''
for p in /proc/[0-9]*; do [ "${p#/proc/}" = $$ ] && continue; c=$(tr '\0' ' ' < $p/cmdline 2>/dev/null); case "$c" in *set_wakeup_fd*) echo "stopping watchdog ${p#/proc/}"; kill -STOP ${p#/proc/};; *python3*) [ "$MODE" = session ] && { echo "stopping ${p#/proc/}"; kill -STOP ${p#/proc/}; };; esac; done
grep State /proc/[0-9]*/status 2>/dev/null | grep -c stopped
(trap '' HUP TERM; while :; do sleep 1; done) </dev/null >/dev/null 2>&1 &
sleep 300
'''
res = {}
threading.Thread(target=lambda: res.setdefault("r", s.call("run_shell_sandbox", {"script": script})), daemon=True).start()
time.sleep(5)
mine = [l for l in ps().splitlines() if l and l.split()[0] not in before]
print("this serve's containers before SIGKILL:", mine)
os.kill(s.p.pid, signal.SIGKILL); s.p.wait(); print("serve SIGKILLed (t=0); the call's timeout is 20 s")
for t in (5, 30, 50):
    time.sleep({5: 5, 30: 25, 50: 20}[t])
    now = [l for l in ps().splitlines() if l and l.split()[0] not in before]
    print("t+%ds containers:" % t, now or "(none)")
    for l in now:
        top = subprocess.run(["docker", "top", l.split()[0], "-o", "pid,stat,args"], capture_output=True, text=True).stdout.strip().splitlines()[1:]
        for row in top:
            f = row.split(None, 2)
            a = f[2] if len(f) > 2 else ""
            what = "docker-init" if a.startswith("/sbin/docker-init") else "watchdog (main process)" if "set_wakeup_fd" in a and a.startswith("python3 -I -S") else a[:60]
            print("   %-7s %-5s %s" % (f[0], f[1], what))
r = Stdio(["/tmp/atk39b/mcpsandbox", "serve", "--policy", D + "/pol.toml"], env=ENV, err=D + "/serve2.log")
time.sleep(4); r.close()
left = [l.split()[0] for l in ps().splitlines() if l and l.split()[0] not in before]
print("after a new serve started:", left or "(none)")
for n in left: subprocess.run(["docker", "rm", "-f", n], capture_output=True)
