#!/bin/bash
# F5: every Inspector call prints "Schema portability: 0 errors, 32 warnings across 4 tools"; --strict names them: all outputSchema nullable type arrays
. /work/notes/trial48/bin/fresh.sh f5; cd $HOME; mkdir -p ws
mcpsandbox init --scheme allowlist --allow wc --workspace $HOME/ws --print --yes > $HOME/s.json 2>/dev/null
cd /tmp/trial48/node
timeout 60 npx @modelcontextprotocol/inspector --cli --config $HOME/s.json --server sandbox --method tools/list 2>&1 >/dev/null | grep -i portab
timeout 60 npx @modelcontextprotocol/inspector --cli --config $HOME/s.json --server sandbox --method tools/list --strict 2>&1 >/dev/null | grep '^  Path:' | sed 's/.*outputSchema/outputSchema/' | sort | uniq -c
