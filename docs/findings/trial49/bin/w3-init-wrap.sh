#!/bin/bash
# init --wrap / --unwrap of the python server added with `claude mcp add` (local scope); claude mcp list between
. /work/notes/trial49/env.sh
cd /tmp/trial49/proj
timeout 60 claude mcp add pysrv -e MY_TOKEN=tok123 -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py 2>&1 | tail -1
python3 -c 'import json;d=json.load(open("/tmp/trial49/home/.claude.json"));print(json.dumps(d["projects"]["/tmp/trial49/proj"]["mcpServers"]["pysrv"]))' | tee /tmp/trial49/pysrv.before
echo "== init --wrap pysrv --client claude-code"; mcpsandbox init --wrap pysrv --client claude-code 2>&1 | tail -8
python3 -c 'import json;d=json.load(open("/tmp/trial49/home/.claude.json"));print(json.dumps(d["projects"]["/tmp/trial49/proj"]["mcpServers"]["pysrv"]))'
echo "== claude mcp list"; timeout 120 claude mcp list 2>&1 | grep pysrv
echo "== call through the wrapped entry (Inspector, env given by -e)"
W=$(ls $XDG_CONFIG_HOME/mcpsandbox/wrap/*pysrv*.toml | head -1); echo "policy: $W"; grep -v '^#' $W | grep . | head -20
timeout 60 mcp-inspector --cli -e MY_TOKEN=tok123 mcpsandbox wrap --policy $W -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py --method tools/call --tool-name env 2>/dev/null | grep -o 'MY_TOKEN[^,]*'
echo "== init --unwrap pysrv"; mcpsandbox init --unwrap pysrv --client claude-code 2>&1 | tail -3
python3 -c 'import json;d=json.load(open("/tmp/trial49/home/.claude.json"));print(json.dumps(d["projects"]["/tmp/trial49/proj"]["mcpServers"]["pysrv"]))' > /tmp/trial49/pysrv.after; cmp /tmp/trial49/pysrv.before /tmp/trial49/pysrv.after && echo "entry restored exactly"
echo "== widen as told, init --wrap again"
sed -i 's#^read    = \[\]#read    = ["/tmp/trial49/srv/pysrv.py"]#' $W
mcpsandbox init --wrap pysrv --client claude-code 2>&1 | tail -4
echo "== claude mcp list"; timeout 120 claude mcp list 2>&1 | grep pysrv
timeout 60 mcp-inspector --cli -e MY_TOKEN=tok123 mcpsandbox wrap --policy $W -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py --method tools/call --tool-name env 2>/dev/null | grep -o 'MY_TOKEN[^,]*'
echo "== init --unwrap pysrv"; mcpsandbox init --unwrap pysrv --client claude-code 2>&1 | tail -3
python3 -c 'import json;d=json.load(open("/tmp/trial49/home/.claude.json"));print(json.dumps(d["projects"]["/tmp/trial49/proj"]["mcpServers"]["pysrv"]))' > /tmp/trial49/pysrv.after; cmp /tmp/trial49/pysrv.before /tmp/trial49/pysrv.after && echo "entry restored exactly"
