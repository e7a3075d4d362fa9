#!/bin/bash
# as root: wrap.write dir owned by root; what does wrap say at start, and with --explain-denials when the answer names the path?
. /work/notes/trial49/env.sh
D=/tmp/trial49/w1   # policy from w1-wrap-python.sh
req() { printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$1"; sleep 1; }
echo "== writefile2 (answer is str(e), names the path), direct stdio, MY_TOKEN and OTHER_SECRET in the environment"
req '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"writefile2","arguments":{"path":"'$D'/data/out.txt"}}}' | MY_TOKEN=tok123 OTHER_SECRET=zzz timeout 20 mcpsandbox wrap --policy $D/py.toml --explain-denials -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 | cut -c1-400
echo "== env tool, direct stdio"
req '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"env","arguments":{}}}' | MY_TOKEN=tok123 OTHER_SECRET=zzz timeout 20 mcpsandbox wrap --policy $D/py.toml -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>/dev/null | tail -1 | grep -o 'MY_TOKEN[^,]*\|OTHER_SECRET[^,]*'
echo "== denied tool called directly (hidden from list)"
req '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"secret_dump","arguments":{}}}' | timeout 20 mcpsandbox wrap --policy $D/py.toml -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>/dev/null | tail -1
