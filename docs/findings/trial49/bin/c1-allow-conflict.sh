#!/bin/bash
# allowlist: a call rewrites out.txt (sort -o) while the host edits out.txt during the call: which version survives, is the other kept?
. /work/notes/trial49/env.sh
W=/tmp/trial49/ws
python3 -c 'import random;print("\n".join(str(random.random()) for _ in range(1500000)))' > $W/big.txt
echo "host version 1" > $W/out.txt; chown 65534:65534 $W/big.txt $W/out.txt
( sleep 5; echo "host edit during the call" >> $W/out.txt; echo "[host edited out.txt at $(date +%T.%N)]" ) &
timeout 90 mcp-inspector --cli --config /tmp/trial49/servers.json --server sandbox --method tools/call --tool-name run_allowed_command --tool-arg command=sort 'args=["-o","out.txt","big.txt"]' 2>/dev/null | grep '"text"\|isError' | cut -c1-900
wait; echo "-- host out.txt now: $(wc -l < $W/out.txt) lines; head:"; head -2 $W/out.txt
K=$(ls -td /tmp/trial49/home/.local/state/mcpsandbox/refused/ws-*/* 2>/dev/null | head -1); echo "newest kept dir: $K"; ls -la $K 2>/dev/null | head; rm -f $W/big.txt
