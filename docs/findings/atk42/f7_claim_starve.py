#!/usr/bin/env python3
"""atk42: docker sessions' keep claim (session.go keepLeft, atk41 F7's fix). A waiting session is told a time (its
claim); at that time the least recently used idle session gives way to "this session" -- but to whichever session's
call comes first: nothing prefers the session whose claim it is. One client with two sessions, each poked once to get
a claim for the next turn and calling 1 s before it, takes every turn: a prompt newcomer V (it comes back 0.3 s after
the time it is told) is told a new time every round, for ever. max_sessions = 1 (the same holds for N places with N+1
attacker sessions). Control first: the same without the attacker (V served at its time).
Starts its own serve (/tmp/atk42/mcpsandbox) on 127.0.0.1:18842; stops it at the end; no container is left."""
import os, re, json, subprocess, time, http.client, threading
D = "/tmp/atk42/d"; PORT = 18842
if not os.path.exists("/tmp/atk42/mcpsandbox"):
    subprocess.run("cd /work/main && CGO_ENABLED=0 go build -p 1 -o /tmp/atk42/mcpsandbox ./cmd/mcpsandbox", shell=True, check=True)
os.makedirs(D + "/home", exist_ok=True)
open(D + "/tok", "w").write("atk42-token-0123456789abcdef\n"); os.chmod(D + "/tok", 0o600)
open(D + "/p.toml", "w").write('''version = 1
scheme = "docker"
name = "sandbox"
[limits]
timeout = "60s"
[audit]
path = "/tmp/atk42/d/audit.jsonl"
[docker]
image = "mcpsandbox-test:bookworm"
network = "none"
reuse = "session"
max_sessions = 1
''')
TOKEN = open(D + "/tok").read().strip()
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + TOKEN}
def post(sid, obj, timeout=90):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)
    h = dict(H)
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
    res = json.loads(body)["result"]; txt = " ".join(c.get("text", "") for c in res.get("content", []))
    m = re.search(r"try again in (\d+)s", txt)
    return (not res.get("isError")), txt.replace("\n", " "), (int(m.group(1)) if m else None)
t0 = time.time()
def say(who, ok, txt, t=None):
    print("%6.1fs %-10s %s %s" % ((t or time.time()) - t0, who, "SERVED " if ok else "REFUSED", txt[:110] if ok else txt[txt.find("try again"):][:40]), flush=True)
def at(t):
    time.sleep(max(0, t - time.time()))
def run(label, attacker, rounds):
    global t0
    srv = subprocess.Popen(["/tmp/atk42/mcpsandbox", "serve", "--policy", D + "/p.toml", "--http", "127.0.0.1:%d" % PORT,
                            "--token-file", D + "/tok"], env={"HOME": D + "/home", "PATH": "/usr/bin:/bin"},
                           stderr=open(D + "/serve-%s.log" % label, "wb"))
    time.sleep(3); t0 = time.time()
    print("==", label)
    try:
        h = init(); say("holder H", *call(h, "echo H")[:2])
        v = init(); ok, txt, n = call(v, "echo V"); say("newcomer V", ok, txt)
        T = time.time() + n
        A = [init(), init()] if attacker else []
        if attacker:
            ok, txt, _ = call(A[0], "echo A0"); say("attacker A0", ok, txt)   # its claim: the same time as V's
        for k in range(rounds):
            if attacker:
                a = A[k % 2]; b = A[(k + 1) % 2]
                at(T - 1.0)
                res = {}
                th = threading.Thread(target=lambda: res.update(r=call(a, "echo A%d" % (k % 2)))); th.start()
                at(T + 0.3)
                ok, txt, n = call(v, "echo V"); say("newcomer V", ok, txt)
                th.join(); say("attacker A%d" % (k % 2), *res["r"][:2])
                while not ok and n is None:  # "try again when one ends": a client tries again 3 s later
                    time.sleep(3); ok, txt, n = call(v, "echo V"); say("newcomer V", ok, txt)
                okb, txtb, _ = call(b, "echo poke"); say("attacker A%d" % ((k + 1) % 2), okb, txtb)  # next turn's claim
            else:
                at(T + 0.3)
                ok, txt, n = call(v, "echo V"); say("newcomer V", ok, txt)
            if ok or n is None:
                break
            T = time.time() + n
    finally:
        srv.terminate(); srv.wait(timeout=30)
    mine = set(re.findall(r'container[=":\s]+"?([0-9a-f]{12})', open(D + "/serve-%s.log" % label, errors="replace").read()))
    alive = subprocess.run(["docker", "ps", "-aq"], capture_output=True, text=True).stdout.split()
    print("serve stopped; its containers (from its log): %d, still there: %s" % (len(mine), [c for c in alive if c[:12] in mine]))
import sys
if "--no-control" not in sys.argv:
    run("control: no attacker", False, 1)
run("attacker with two sessions", True, 3)
