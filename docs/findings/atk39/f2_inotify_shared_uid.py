#!/usr/bin/env python3
"""atk39 F2: every docker container of every session (and every serve) runs as host uid 65534
(no user namespace), so the kernel's per-user limits are one pool for all of them: a call holding
fs.inotify.max_user_instances (128) inotify instances makes inotify_init fail (EMFILE) in another
client's concurrent container (and in any host process running as nobody).
Needs setup.sh (builds /tmp/atk39/ws/inoprobe from inoprobe.go.txt) and the image."""
import os, sys, threading, time, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
env = {"HOME": "/tmp/atk39/home", "PATH": "/usr/bin:/bin"}
argv = ["/tmp/atk39/mcpsandbox", "serve", "--policy", "/tmp/atk39/probe.toml"]
a = Stdio(argv, env=env, err="/tmp/atk39/f2a.log")   # client A (one stdio session)
b = Stdio(argv, env=env, err="/tmp/atk39/f2b.log")   # client B (another serve, another session)
print("B before:", text(b.call("run_shell_sandbox", {"script": "/workspace/inoprobe try"})).strip())
res = {}
t = threading.Thread(target=lambda: res.setdefault("a", a.call("run_shell_sandbox", {"script": "/workspace/inoprobe hold 200 8"})))
t.start(); time.sleep(3)
print("B while A's call runs:", text(b.call("run_shell_sandbox", {"script": "/workspace/inoprobe try"})).strip())
r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/tmp/atk39/ws/inoprobe", "try"], capture_output=True, text=True)
print("host process as nobody while A's call runs:", r.stdout.strip(), r.stderr.strip())
t.join()
print("A:", text(res["a"]).strip())
print("B after:", text(b.call("run_shell_sandbox", {"script": "/workspace/inoprobe try"})).strip())
a.close(); b.close()
