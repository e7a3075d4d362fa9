#!/usr/bin/env python3
"""atk39 F8: the host name a sandbox sends in CONNECT reaches the audit log's egress line (arguments.host and
reason) with bidi controls raw (U+202E RIGHT-TO-LEFT OVERRIDE): `jq` prints them for the terminal to reorder,
as atk38b F6 found for workspace paths (fixed there with visible.Name, not here)."""
import os, sys, json, time, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
for f in os.listdir("/tmp/atk39"):
    if f.startswith("audit-eg.jsonl"): os.remove("/tmp/atk39/" + f)
env = dict(os.environ, MCPSANDBOX_EGRESS_STANDINS="vhost.test=127.0.0.1:8080,tls.test=127.0.0.1:8443", HOME="/tmp/atk39/home")
s = Stdio(["/tmp/atk39/mcpsandbox-th", "serve", "--policy", "/tmp/atk39/eg.toml"], env=env, err="/tmp/atk39/f8.serve.log")
code = r'''
import socket
host = "\u202etset.tsohv\u202c.moc.live-ro-tset.tsohv"   # shown by a bidi terminal like "vhost.test..." 
c = socket.create_connection(("127.0.0.1", 3128))
c.sendall(("CONNECT %s:443 HTTP/1.1\r\n\r\n" % host).encode())
print(c.recv(600).decode(errors="replace")[:300])
'''
print(text(s.call("run_python_sandbox", {"code": code})))
s.close()
raw = open("/tmp/atk39/audit-eg.jsonl", "rb").read()
for l in raw.splitlines():
    if b'"egress"' in l:
        print("audit line bytes hold U+202E raw:", b"\xe2\x80\xae" in l, "| escaped \\u202e:", b"\\u202e" in l)
        print("  host as jq -r would print it:", json.loads(l)["arguments"]["host"].encode("unicode_escape").decode())
print("serve's stderr line:", [x for x in open("/tmp/atk39/f8.serve.log", encoding="utf-8", errors="replace") if "egress denied" in x][:1])
