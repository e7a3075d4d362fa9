#!/usr/bin/env python3
"""atk44b F1 end to end: serve (docker scheme, writable workspace) over stdio; N run_shell_sandbox calls
each leaving 1000 files and 1000 links out named with '<' in the workspace; the client never reads its
answers. Samples serve's VmRSS. The bound: 32 MiB of unread answers a client (counted 4x)."""
import subprocess, json, sys, os, time, threading
N = int(sys.argv[1]) if len(sys.argv) > 1 else 12
K = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
SECS = float(sys.argv[2]) if len(sys.argv) > 2 else 55
BIN, POL = "/tmp/atk44b/mcpsandbox", "/tmp/atk44b/e2e/policy.toml"
env = dict(os.environ, XDG_STATE_HOME="/tmp/atk44b/e2e/state")
p = subprocess.Popen([BIN, "serve", "--policy", POL], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open("/tmp/atk44b/e2e/serve.err", "ab"), env=env)
def send(o): p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
print("init:", p.stdout.readline()[:80])
send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
def script(i):
    c = "<" * 250
    return ("cd /workspace; d='%s'%d; mkdir \"$d\"; t=/$(printf '%%04000d' 0 | tr 0 '<'); i=0; "
            "while [ $i -lt %d ]; do : > \"$d/\"'%s'$i; ln -s \"$t\" \"$d/L\"'%s'$i; i=$((i+1)); done; echo done" % (c, i, K, c[:245], c[:244]))
def rss():
    for l in open("/proc/%d/status" % p.pid):
        if l.startswith("VmRSS"): return int(l.split()[1]) // 1024
t0 = time.time()
for i in range(N):
    send({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {"name": "run_shell_sandbox", "arguments": {"script": script(i)}}})
peak, samples = 0, []
while time.time() - t0 < SECS:
    r = rss(); peak = max(peak, r); samples.append((round(time.time() - t0, 1), r))
    time.sleep(0.5)
audited = sum(1 for l in open("/tmp/atk44b/e2e/audit.jsonl") if '"decision":"ran"' in l) if os.path.exists("/tmp/atk44b/e2e/audit.jsonl") else 0
print("%d calls sent, none read; %d audited as ran within %.0f s; serve VmRSS peak %d MiB" % (N, audited, SECS, peak))
print("samples (s, MiB):", samples[::8])
# read everything now: every answer comes
got, big = 0, 0
p.stdout.flush()
def reader():
    global got, big
    for l in p.stdout:
        got += 1; big = max(big, len(l))
th = threading.Thread(target=reader, daemon=True); th.start()
th.join(timeout=120)
print("then read: %d answers so far, largest line %d bytes" % (got, big))
p.stdin.close(); p.terminate(); p.wait()
