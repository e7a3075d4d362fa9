#!/bin/bash
# a client config with the "mcpServers" key twice (hand-edited): which one does init write into, which one does the client read?
. /work/notes/trial49/env.sh
cd /tmp/trial49/proj
G=$HOME/.gemini/settings.json; cp $G /tmp/trial49/gemini.saved
printf '{\n  "mcpServers": {"first": {"command": "/bin/true"}},\n  "mcpServers": {"second": {"command": "/bin/true"}}\n}\n' > $G
mcpsandbox init --policy /tmp/trial49/dsess.toml --client gemini --yes 2>&1 | tail -4
echo "-- file now:"; cat $G
echo "-- gemini mcp list:"; timeout 120 gemini mcp list 2>&1 | tail -4
echo "-- python json (last wins):"; python3 -c 'import json;print(list(json.load(open("'$G'"))["mcpServers"]))'
cp /tmp/trial49/gemini.saved $G
