"""atk48b: requests racing serve's start-up on stdio: initialize, then at once (no wait) tools/list,
N tools/call and pings, all in one write; every id must get exactly one answer, stdout only JSON.
Then: stdin closed right after the burst (does serve exit, and when). argv: BIN POLICY N"""
import sys, json, time, os
sys.path.insert(0, os.path.dirname(__file__))
from stdio_fuzz import Serve, INIT, INITED
BIN, POL, N = sys.argv[1], sys.argv[2], int(sys.argv[3])
import stdio_fuzz; stdio_fuzz.BIN, stdio_fuzz.POL = BIN, POL
for closing in (False, True):
    t0 = time.time()
    s = Serve()
    burst = [INIT, INITED, {"jsonrpc": "2.0", "id": "tl", "method": "tools/list"}]
    for i in range(N):
        burst.append({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": "run_shell_sandbox", "arguments": {"script": "echo c%d" % i}}})
        burst.append({"jsonrpc": "2.0", "id": "p%d" % i, "method": "ping"})
    s.p.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in burst)); s.p.stdin.flush()
    if closing:
        s.p.stdin.close()
    lines = s.lines(90, 2 * N + 2)
    ids, stray = {}, []
    for l in lines:
        if l == b"<EOF>": continue
        try: d = json.loads(l)
        except Exception: stray.append(l); continue
        if "id" in d:
            ids.setdefault(json.dumps(d["id"]), []).append(d)
    want = ['0', '"tl"'] + [str(i + 1) for i in range(N)] + ['"p%d"' % i for i in range(N)]
    missing = [w for w in want if w not in ids]
    dup = [k for k, v in ids.items() if len(v) > 1]
    errs = [(k, v[0].get("error") or (v[0]["result"].get("isError") and v[0]["result"]["content"][0]["text"][:160])) for k, v in ids.items() if v[0].get("error") or (v[0].get("result") or {}).get("isError")]
    print("stdin closed after burst=%s: %d lines in %.1fs; missing %s; duplicate %s; stray %r" % (closing, len(lines), time.time() - t0, missing, dup, stray[:3]))
    for e in errs[:10]: print("   error answer:", e)
    if not closing:
        s.p.stdin.close()
    t1 = time.time()
    try: rc = s.p.wait(60)
    except Exception: rc = "still running after 60 s"; s.p.kill(); s.p.wait()
    print("   serve exit %s, %.1fs after stdin closed" % (rc, time.time() - t1))
