#!/usr/bin/env python3
"""F9: docker reuse = "session": an egress audit line's arguments.call is the call the container runs when the
connection is made. A process call A left in the background connects while call B runs: the line names B, a call
that made no connection (README: "A connection a session's background process opens between calls names none" -
one opened during a later call names that later call). Docker, short; the session container goes with serve."""
import os, sys, time, json, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
D = "/tmp/atk39b/f9"; os.makedirs(D + "/home", exist_ok=True)
if os.path.exists(D + "/audit.jsonl"): os.remove(D + "/audit.jsonl")
open(D + "/pol.toml", "w").write('''version = 1
scheme = "docker"
name = "sandbox"
[limits]
timeout = "30s"
[audit]
path = "%s/audit.jsonl"
[docker]
image = "mcpsandbox-test:bookworm"
network = ["allowed.test"]
reuse = "session"
''' % D); os.chmod(D + "/pol.toml", 0o600)
s = Stdio(["/tmp/atk39b/mcpsandbox", "serve", "--policy", D + "/pol.toml"], env={"HOME": D + "/home", "PATH": "/usr/bin:/bin"}, err=D + "/serve.log")
bg = r'''(sleep 5; python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT elsewhere.test:443 HTTP/1.1\\r\\nHost: elsewhere.test:443\\r\\n\\r\\n')
print(s.recv(200))
") >/tmp/bg.log 2>&1 &
echo call A left a background process'''
print("call A:", text(s.call("run_shell_sandbox", {"script": bg})).strip()[:700])
print("call B:", text(s.call("run_shell_sandbox", {"script": "sleep 10; echo call B made no connection; tail -c 300 /tmp/bg.log; env | grep -i proxy"})).strip()[:700])
s.close(); time.sleep(1)
calls = {}
for l in open(D + "/audit.jsonl"):
    e = json.loads(l)
    if e.get("tool") == "run_shell_sandbox" and e.get("decision") == "started":
        calls[e.get("call")] = "A" if "background" in json.dumps(e.get("arguments")) else "B"
    if e.get("tool") == "egress":
        a = e.get("arguments", {})
        print("egress line: host=%s decision=%s arguments.call=%s -> call %s" % (a.get("host"), e.get("decision"), a.get("call"), calls.get(a.get("call"), "?")))
print("calls:", calls)
