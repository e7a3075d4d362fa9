#!/usr/bin/env python3
"""atk45b F1 end to end: a real `mcpsandbox serve` (allowlist scheme) over stdio. Stage 1 (its answers are
small and fit the pipe's buffer: nothing is read): for each pair i, a slow-ish request under id 1000+i
followed by a ping under the same id (the SDK drops the duplicate silently), and the same under id 2000+i
with a tools/call as the duplicate. Stage 2, nothing read: read_file of a 4 MiB text with 11% '<'
(an answer of ~13 MB, counted 52 MiB against the 32 MiB bound) under id 1000+i, then a ping under 2000+i.
argv: pairs (14), mode ("ping" | "noping" control). Samples serve's VmRSS; counts read_file calls audited."""
import subprocess, json, sys, os, time, threading
PAIRS = int(sys.argv[1]) if len(sys.argv) > 1 else 14
MODE = sys.argv[2] if len(sys.argv) > 2 else "ping"
BIN, POL, AUD = "/tmp/atk45b/mcpsandbox", "/tmp/atk45b/e2e/policy.toml", "/tmp/atk45b/e2e/audit.jsonl"
if os.path.exists(AUD): os.remove(AUD)
env = dict(os.environ, XDG_STATE_HOME="/tmp/atk45b/e2e/state")
p = subprocess.Popen([BIN, "serve", "--policy", POL], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open("/tmp/atk45b/e2e/serve.err", "ab"), env=env)
def send(o): p.stdin.write((json.dumps(o) + "\n").encode()); p.stdin.flush()
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
print("init:", p.stdout.readline()[:60])
send({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}})
def rss():
    for l in open("/proc/%d/status" % p.pid):
        if l.startswith("VmRSS"): return int(l.split()[1]) // 1024
def audited(tool):
    if not os.path.exists(AUD): return 0
    return sum(1 for l in open(AUD) if '"decision":"ran"' in l and '"tool":"%s"' % tool in l)
slow = {"name": "list_files", "arguments": {}}
for i in range(PAIRS):
    send({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": slow})
    send({"jsonrpc": "2.0", "id": 1000 + i, "method": "ping"})
    send({"jsonrpc": "2.0", "id": 2000 + i, "method": "tools/call", "params": slow})
    send({"jsonrpc": "2.0", "id": 2000 + i, "method": "tools/call", "params": {"name": "list_files", "arguments": {}}})
time.sleep(3)
print("stage 1: list_files audited ran %d (of %d sent, half silently dropped as duplicates)" % (audited("list_files"), 4 * PAIRS))
base = rss(); peak = base; t0 = time.time()
for i in range(PAIRS):
    send({"jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "big.txt"}}})
    time.sleep(1.0)
    if MODE == "ping":
        send({"jsonrpc": "2.0", "id": 2000 + i, "method": "ping"})
    peak = max(peak, rss())
for _ in range(10):
    time.sleep(0.5); peak = max(peak, rss())
print("mode %s, %d pairs: %d of %d read_file calls ran while no answer was read; serve VmRSS %d MiB before, %d MiB peak (%.0f s)" %
      (MODE, PAIRS, audited("read_file"), PAIRS, base, peak, time.time() - t0))
got, big = 0, 0
def reader():
    global got, big
    for l in p.stdout:
        got += 1; big = max(big, len(l))
th = threading.Thread(target=reader, daemon=True); th.start()
th.join(timeout=15)
print("then read for 15 s: %d answers, largest line %d bytes; read_file audited ran %d" % (got, big, audited("read_file")))
p.stdin.close(); p.terminate(); p.wait()
