#!/usr/bin/env python3
"""atk39 F2b: with workspace_writable the container runs as the workspace owner's host uid (12345 here):
a call holding 128 inotify instances makes inotify_init fail for the owner's own host processes
(their IDE, file watchers) while it runs."""
import os, sys, threading, time, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
s = Stdio(["/tmp/atk39/mcpsandbox", "serve", "--policy", "/tmp/atk39/wsw.toml"], env={"HOME": "/tmp/atk39/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk39/f2b.log")
def host_try():
    r = subprocess.run(["setpriv", "--reuid=12345", "--regid=12345", "--clear-groups", "/tmp/atk39/wsw/inoprobe", "try"], capture_output=True, text=True)
    return (r.stdout + r.stderr).strip()
print("owner's host process before:", host_try())
res = {}
t = threading.Thread(target=lambda: res.setdefault("a", s.call("run_shell_sandbox", {"script": "id -u; /workspace/inoprobe hold 200 6"})))
t.start(); time.sleep(3)
print("owner's host process during the call:", host_try())
t.join()
print("call:", text(res["a"]).strip())
print("owner's host process after:", host_try())
s.close()
