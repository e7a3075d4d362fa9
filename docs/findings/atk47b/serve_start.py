"""atk47b: serve on a docker policy whose start-up fails after the first answers (an image that
cannot be pulled). A call sent at once (while the pull runs) and one sent after; the answers,
the audit lines, serve's stderr. argv: BIN POLICY AUDIT"""
import sys, os, json, time, threading
sys.path.insert(0, "/work/main/docs/findings/lib")
from mcpstdio import Stdio, text
bin_, pol, aud = sys.argv[1:4]
if os.path.exists(aud): os.remove(aud)
err = "/tmp/atk47b/w/serve_start.err"
open(err, "w").close()
t0 = time.time()
s = Stdio([bin_, "serve", "--policy", pol], err=err)
print("initialize:", "ok" if s.init and "result" in s.init else s.init, "%.2fs" % (time.time() - t0))
tl = s.req("tools/list", {})
print("tools:", [t["name"] for t in tl["result"]["tools"]])
# the first call at once (the start-up still pulling)
r1 = s.call("run_shell_sandbox", {"script": "echo hi"})
print("call 1 (at once) after %.2fs: isError=%s\n  %s" % (time.time() - t0, r1["result"].get("isError"), text(r1)[:400]))
time.sleep(2)
r2 = s.call("run_shell_sandbox", {"script": "echo hi"})
print("call 2 (later) after %.2fs: isError=%s\n  %s" % (time.time() - t0, r2["result"].get("isError"), text(r2)[:400]))
for name, args in (("write_file", {"path": "a.txt", "content": "x"}), ("list_files", {})):
    r = s.call(name, args)
    if r is None: print(name, "-> no answer"); continue
    print("%s: isError=%s %s" % (name, r.get("result", {}).get("isError"), (text(r) if "result" in r else json.dumps(r))[:300]))
s.close()
print("serve exit:", s.p.returncode)
print("--- audit lines:")
for l in open(aud) if os.path.exists(aud) else []:
    d = json.loads(l)
    print({k: d.get(k) for k in ("tool", "decision", "rule", "reason")})
print("--- serve stderr:")
print(open(err).read()[-1500:])
