#!/usr/bin/env python3
"""atk39 F5: a docker call's egress decisions carry the session and the container's name; the call's own
audit lines carry the call id and neither the container nor anything the egress lines hold. Two calls
of one session at once (max_concurrent = 4): which call made which request cannot be read from the log."""
import os, sys, json, time, threading, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
D = os.path.dirname(os.path.abspath(__file__))
srv = subprocess.Popen(["node", D + "/vhost_server.js", "8080"]); time.sleep(0.5)
for f in os.listdir("/tmp/atk39"):
    if f.startswith("audit-eg.jsonl"): os.remove("/tmp/atk39/" + f)
env = dict(os.environ, MCPSANDBOX_EGRESS_STANDINS="vhost.test=127.0.0.1:8080,tls.test=127.0.0.1:8443", HOME="/tmp/atk39/home")
s = Stdio(["/tmp/atk39/mcpsandbox-th", "serve", "--policy", "/tmp/atk39/eg.toml"], env=env, err="/tmp/atk39/f5.serve.log")
code = ('import socket,time; time.sleep(1); c = socket.create_connection(("127.0.0.1", 3128)); '
        'c.sendall(b"GET http://vhost.test:8080/%s HTTP/1.1\\r\\nHost: vhost.test:8080\\r\\n\\r\\n"); print(c.recv(300))')
# the stdio client sends both calls before reading either answer
for i, who in ((11, "innocent"), (12, "exfil-secret-data")):
    s.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "run_python_sandbox", "arguments": {"code": code % who}}})
got = 0
while got < 2:
    d = json.loads(s.p.stdout.readline())
    if d.get("id") in (11, 12): got += 1; print("result", d["id"], text(d)[:300])
s.close(); srv.terminate()
for l in open("/tmp/atk39/audit-eg.jsonl"):
    d = json.loads(l)
    a = d.get("arguments", {})
    if d["tool"] == "egress":
        print("egress: session=%s call=%s client=%s %s %s:%s" % (d["session"][:8], d.get("call"), a.get("client"), d["decision"], a.get("host"), a.get("port")))
    elif d["decision"] != "started":
        print("call  : session=%s call=%s container=%s requests %s" % (d["session"][:8], d.get("call", "")[:8], d.get("container", a.get("container")), __import__("re").findall(r"vhost.test:8080/[a-z-]+", a.get("code", ""))[0]))
