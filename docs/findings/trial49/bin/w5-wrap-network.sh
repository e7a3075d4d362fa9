#!/bin/bash
# wrap with network = ["example.com"]: the server fetches an unlisted host and the listed one (offline machine)
. /work/notes/trial49/env.sh
D=/tmp/trial49/w5; rm -rf $D; mkdir -p $D
cat > $D/net.toml <<T
version = 1
scheme  = "wrap"
name    = "pynet"
[audit]
path = "$D/audit.jsonl"
[wrap]
read  = ["/tmp/trial49/srv"]
network = ["example.com"]
T
for u in http://evil.example.net/x http://example.com/ http://169.254.169.254/latest/meta-data/; do
echo "== fetch $u"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":{"path":"'$u'"}}}' | (cat; sleep 7) | timeout 20 mcpsandbox wrap --policy $D/net.toml --explain-denials -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 | grep -v 'private HOME\|msg=wrapping\|"id": 1' | cut -c1-400
done
echo "== following the advice for the metadata IP: network = [\"example.com\", \"169.254.169.254\"]"
sed 's/^network = .*/network = ["example.com", "169.254.169.254"]/' $D/net.toml > $D/net2.toml
mcpsandbox verify --policy $D/net2.toml --no-harness 2>&1 | grep -B1 -A2 '169.254' | head -8
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' | timeout 10 mcpsandbox wrap --policy $D/net2.toml -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 | grep -v '"id": 1' | tail -2 | cut -c1-300
echo "== following the advice literally: an allowlist.network key in the wrap policy"
printf '[allowlist]\nnetwork = ["evil.example.net"]\n' >> $D/net.toml
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' | timeout 10 mcpsandbox wrap --policy $D/net.toml -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 | grep -v '"id": 1' | tail -1 | cut -c1-300
echo "== the same denial under an allowlist policy with a host list, for comparison (rule name there)"
cd /tmp/trial49/src && grep -rn '"allowlist.network"' --include=*.go internal/egress* internal/*/egress* 2>/dev/null | grep -v _test | head -5
echo "== with that [allowlist] section added (accepted without a word), fetch evil.example.net again"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fetch","arguments":{"path":"http://evil.example.net/x"}}}' | (cat; sleep 6) | timeout 20 mcpsandbox wrap --policy $D/net.toml --explain-denials -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 | grep 'egress denied' | cut -c1-300
mcpsandbox verify --policy $D/net.toml --no-harness 2>&1 | sed -n '1,/^2\./p'
