#!/bin/bash
# a writing call and a host edit of the same file during the call: is either write lost?
I=/work/notes/trial48/bin/insp.sh; W=/tmp/trial48/home/dws
printf 'original\n' > $W/conf.txt; chown 1000:1000 $W/conf.txt
( sleep 2.5; printf 'HOST EDIT during the call\n' > $W/conf.txt; echo "host wrote at $(date +%T.%N)" ) &
$I /tmp/trial48/d.json ${1:-dwrite} tools/call run_shell_sandbox --tool-arg 'script=sleep 5; echo "CALL EDIT" > /workspace/conf.txt; echo call wrote' | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["content"][0]["text"]); print(json.dumps(d["structuredContent"].get("workspace")))'
wait
echo "--- conf.txt after:"; cat $W/conf.txt; ls -la $W
