#!/bin/bash
# serve --check on a wrap policy: which rows does it print, and are they true of the wrapped server?
# measured: the wrapped server writes protected names (.envrc, .git/hooks/pre-commit) into its wrap.write dir
. /work/notes/trial49/env.sh
D=/tmp/trial49/f7; rm -rf $D; mkdir -p $D/data/.git/hooks; chown -R 65534:65534 $D/data
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
echo "== serve --check (WARN lines and the rows about pinning, workspace, protected paths)"
timeout 60 mcpsandbox serve --policy $D/py.toml --check 2>&1 | grep -E 'WARN|^pinned exec|^clean environment|^transactional workspace|^protected paths|^egress proxy' | cut -c1-330
echo "== serve --check --json: the same rows"
timeout 60 mcpsandbox serve --policy $D/py.toml --check --json 2>/dev/null | python3 -c 'import sys,json
d=json.load(sys.stdin)
for l in d.get("layers",[]):
  if any(k in json.dumps(l) for k in ("transactional","protected","pinned")): print(json.dumps(l)[:200])' 2>&1 | head
echo "== the wrapped server writes .envrc and .git/hooks/pre-commit in wrap.write"
for p in .envrc .git/hooks/pre-commit; do
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"writefile","arguments":{"path":"'$D/data/$p'","text":"echo planted"}}}' | (cat; sleep 1.5) | timeout 20 mcpsandbox wrap --policy $D/py.toml -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>/dev/null | grep '"id": 2' | cut -c1-200
done
ls -la $D/data $D/data/.git/hooks
echo "== README's own words on wrap.write"; grep -o 'Writes in `\[wrap\].write` land directly (no transactional layer, no protect list[^)]*)' /tmp/trial49/src/README.md
