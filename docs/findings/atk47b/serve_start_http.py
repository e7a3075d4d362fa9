"""atk47b: serve.start over streamable HTTP: a docker policy whose image cannot be pulled.
A call sent right after initialize (the start-up pending) and one 2 s later. argv: BIN POLICY AUDIT PORT"""
import sys, os, json, time, subprocess, urllib.request
bin_, pol, aud, port = sys.argv[1:5]
if os.path.exists(aud): os.remove(aud)
err = open("/tmp/atk47b/w/serve_http.err", "w")
p = subprocess.Popen([bin_, "serve", "--policy", pol, "--http", "127.0.0.1:" + port], stdout=subprocess.DEVNULL, stderr=err)
url = "http://127.0.0.1:%s/mcp" % port
sid = None
def post(obj):
    global sid
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    if sid: h["Mcp-Session-Id"] = sid
    req = urllib.request.Request(url, data=json.dumps(obj).encode(), headers=h)
    with urllib.request.urlopen(req, timeout=60) as r:
        sid = r.headers.get("Mcp-Session-Id") or sid
        body = r.read().decode()
    for line in body.splitlines():
        if line.startswith("data:"):
            return json.loads(line[5:])
    return json.loads(body) if body.strip() else None
for i in range(100):
    try:
        r = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
        break
    except Exception as e:
        time.sleep(0.05)
print("initialize:", "ok" if r and "result" in r else r)
post({"jsonrpc": "2.0", "method": "notifications/initialized"})
for n, delay in ((2, 0), (3, 2)):
    time.sleep(delay)
    r = post({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "run_shell_sandbox", "arguments": {"script": "echo hi"}}})
    print("call %d (after %ds): isError=%s %s" % (n, delay, r["result"].get("isError"), r["result"]["content"][0]["text"][:160]))
print("serve still running:", p.poll() is None)
p.terminate(); p.wait()
for l in open(aud) if os.path.exists(aud) else []:
    d = json.loads(l)
    print({k: d.get(k) for k in ("tool", "decision", "rule")})
