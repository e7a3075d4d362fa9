#!/bin/bash
# as root, a wrap.write directory owned by root: verify says MS505 with its chown; does wrap's own start log (the client's
# MCP log) say so, and does a failed write whose answer does not name the path get the chown?
. /work/notes/trial49/env.sh
D=/tmp/trial49/f4; rm -rf $D; mkdir -p $D/data
cat > $D/py.toml <<T
version = 1
scheme  = "wrap"
name    = "pysrv"
[audit]
path = "$D/audit.jsonl"
[wrap]
read  = ["/tmp/trial49/srv"]
write = ["$D/data"]
T
echo "== verify (policy audit)"; mcpsandbox verify --policy $D/py.toml --no-harness 2>&1 | grep -A1 MS505
req='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"writefile","arguments":{"path":"'$D'/data/out.txt"}}}'
echo "== wrap --explain-denials: its whole stderr (the client's MCP log) and the answer"
printf '%s\n' "$req" | (cat; sleep 2) | timeout 20 mcpsandbox wrap --policy $D/py.toml --explain-denials -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 | cut -c1-330
echo "== lines of that stderr naming chown or MS505: $(printf '%s\n' "$req" | (cat; sleep 2) | timeout 20 mcpsandbox wrap --policy $D/py.toml --explain-denials -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 >/dev/null | grep -c 'chown\|nobody')"
