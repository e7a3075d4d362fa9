#!/usr/bin/env python3
"""atk41 F7: under docker reuse = "session", one client keeps docker.max_sessions places for ever with one
trivial call per session every 25 s (under the 30 s keep): every newcomer's call waits up to 20 s, then is refused,
every time. max_sessions = 1 here so that the run is short; the same holds for 4 with 4 held sessions.
Starts its own serve (/tmp/atk41/mcpsandbox) on 127.0.0.1:18841; stops it at the end."""
import os, sys, json, subprocess, time, http.client, threading
D = "/tmp/atk41/d"; PORT = 18841
os.makedirs(D + "/home", exist_ok=True)
open(D + "/tok", "w").write("atk41-token-0123456789abcdef\n"); os.chmod(D + "/tok", 0o600)
open(D + "/p.toml", "w").write('''version = 1
scheme = "docker"
name = "sandbox"
[limits]
timeout = "60s"
[audit]
path = "/tmp/atk41/d/audit.jsonl"
[docker]
image = "mcpsandbox-test:bookworm"
network = "none"
reuse = "session"
max_sessions = 1
''')
TOKEN = open(D + "/tok").read().strip()
srv = subprocess.Popen(["/tmp/atk41/mcpsandbox", "serve", "--policy", D + "/p.toml", "--http", "127.0.0.1:%d" % PORT,
                        "--token-file", D + "/tok"], env={"HOME": D + "/home", "PATH": "/usr/bin:/bin"},
                       stderr=open(D + "/serve.log", "wb"))
time.sleep(3)
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + TOKEN}
def post(sid, obj, timeout=90):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = dict(H); 
    if sid: h["Mcp-Session-Id"] = sid
    c.request("POST", "/mcp", json.dumps(obj), h)
    r = c.getresponse(); body = r.read().decode(errors="replace"); return r, body
def init():
    r, _ = post(None, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}})
    sid = r.getheader("Mcp-Session-Id"); post(sid, {"jsonrpc": "2.0", "method": "notifications/initialized"}); return sid
def call(sid, script):
    r, body = post(sid, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "run_shell_sandbox", "arguments": {"script": script}}})
    for line in body.splitlines():
        if line.startswith("data:"): body = line[5:]
    try:
        res = json.loads(body)["result"]; txt = " ".join(c.get("text", "") for c in res.get("content", []))
        return ("ERROR " if res.get("isError") else "ok ") + txt.replace("\n", " ")[:260]
    except Exception as e:
        return "?? " + body[:260]
t0 = time.time()
A = init()
print("%5.1fs holder A: %s" % (time.time() - t0, call(A, "echo A-first")))
stop = False
def keep():
    while not stop:
        time.sleep(25)
        if stop: break
        print("%5.1fs holder A keeps its place: %s" % (time.time() - t0, call(A, "true; echo A-keepalive")), flush=True)
th = threading.Thread(target=keep, daemon=True); th.start()
for k in range(7):
    time.sleep(2 if k == 0 else 9)
    B = init()
    t = time.time()
    print("%5.1fs newcomer B%d call: %s  (answered after %.1fs)" % (time.time() - t0, k, call(B, "echo B"), time.time() - t), flush=True)
stop = True
srv.terminate(); srv.wait(timeout=20)
print("serve stopped; containers left with this serve's label:", subprocess.run(["docker", "ps", "-aq", "--filter", "label=dev.mcpsandbox.instance"], capture_output=True, text=True).stdout.split())
