#!/bin/bash
# docker per call with a writable workspace, via init's entry; Gemini CLI; Inspector tool calls
. /work/notes/trial49/env.sh
chown -R 65534:65534 /tmp/trial49/dws; cd /tmp/trial49/proj
mcpsandbox init --scheme docker --image mcpsandbox-test:bookworm --docker-workspace /tmp/trial49/dws --docker-workspace-writable \
  --name dcall --policy-out /tmp/trial49/dcall.toml --client claude-code --client gemini --yes 2>&1 | tail -6
echo "== gemini mcp list"; timeout 120 gemini mcp list 2>&1 | tail -3
mcpsandbox init --policy /tmp/trial49/dcall.toml --print --yes > /tmp/trial49/dcall.json 2>/dev/null
I() { timeout 90 mcp-inspector --cli --config /tmp/trial49/dcall.json --server dcall "$@" 2>/dev/null | grep -v '"type": "text",$' | grep -v '^    "\(exit_code\|truncated\|timed_out\|duration_ms\|stdout\|stderr\)"' | head -c ${N:-1500}; echo; }
echo "== write_file sub/x.py"; I --method tools/call --tool-name write_file --tool-arg path=sub/x.py 'content=print(6*7)'
echo "== run_python edits a file and writes a hook"; I --method tools/call --tool-name run_python_sandbox --tool-arg 'code=import os
open("/workspace/d.txt","a").write("more\n")
os.makedirs("/workspace/.git/hooks",exist_ok=True)
open("/workspace/.git/hooks/post-checkout","w").write("#!/bin/sh\nid\n")
print("done")'
echo "-- host:"; cat /tmp/trial49/dws/d.txt; ls -la /tmp/trial49/dws/.git 2>&1 | head -3
echo "== write_file /etc/x (outside)"; I --method tools/call --tool-name write_file --tool-arg path=/etc/x content=1
echo "== read_file ../../etc/shadow"; I --method tools/call --tool-name read_file --tool-arg path=../../etc/shadow
echo "== run_shell timeout 2s with sleep 10 and a write"; I --method tools/call --tool-name run_shell_sandbox --tool-arg 'script=echo partial > /workspace/late.txt; sleep 10' --tool-arg timeout=2
ls /tmp/trial49/dws
