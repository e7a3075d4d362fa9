"""atk47b: spawn to initialize answered (and tools/list), docker policy on the test image, HEAD~1 vs
HEAD alternated, N rounds. argv: POLICY BIN_BASE BIN_HEAD N"""
import sys, time, json, subprocess, statistics
pol, base, head, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def once(b):
    t0 = time.perf_counter()
    p = subprocess.Popen([b, "serve", "--policy", pol], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    p.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}\n'); p.stdin.flush()
    p.stdout.readline(); t1 = time.perf_counter()
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'); p.stdin.flush()
    p.stdout.readline(); t2 = time.perf_counter()
    p.stdin.close(); p.wait()
    return (t1 - t0) * 1000, (t2 - t0) * 1000
res = {"HEAD~1": [], "HEAD": []}
for i in range(n):
    for k, b in (("HEAD~1", base), ("HEAD", head)):
        res[k].append(once(b))
for k, v in res.items():
    print("%-7s initialize answered: median %.0f ms (min %.0f max %.0f); tools/list: median %.0f ms" % (k, statistics.median(x[0] for x in v), min(x[0] for x in v), max(x[0] for x in v), statistics.median(x[1] for x in v)))
