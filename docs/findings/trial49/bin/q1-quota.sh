#!/bin/bash
# docker per call, writable workspace, workspace_quota = 1MiB: a call that edits a file and then writes 3 MiB; what is said, what is kept?
. /work/notes/trial49/env.sh
sed 's/^workspace_quota *=.*/workspace_quota  = "1MiB"/' /tmp/trial49/dcall.toml > /tmp/trial49/dq.toml; grep -n workspace_quota /tmp/trial49/dq.toml
cat $XDG_CONFIG_HOME/../.config/mcpsandbox/../../.config/mcpsandbox/policy.toml >/dev/null 2>&1
echo "before: $(cat /tmp/trial49/dws/d.txt | wc -l) lines in d.txt"
I() { timeout 90 mcp-inspector --cli /tmp/trial49/home/bin/mcpsandbox serve --policy /tmp/trial49/dq.toml "$@" 2>/dev/null | grep -v '"type": "text",$' | head -c 1800; echo; }
I --method tools/call --tool-name run_python_sandbox --tool-arg 'code=open("/workspace/d.txt","a").write("edit before the big write\n")
import time
open("/workspace/big.bin","wb").write(b"x"*3*1024*1024)
time.sleep(1)
print("wrote")'
echo "after: $(cat /tmp/trial49/dws/d.txt | wc -l) lines in d.txt"; ls -la /tmp/trial49/dws
echo "== write_file of 5 MiB (> max_file_bytes 4MiB)"; python3 -c 'print("y"*5*1024*1024)' > /tmp/trial49/big.txt
timeout 90 mcp-inspector --cli /tmp/trial49/home/bin/mcpsandbox serve --policy /tmp/trial49/dq.toml --method tools/call --tool-name write_file --tool-arg path=b.txt "content=$(cat /tmp/trial49/big.txt)" 2>&1 | grep -v '"type": "text",$' | grep -v Keychain\|keychain | head -c 700; echo
