#!/bin/bash
# docker tools, right and wrong arguments, through the Inspector CLI; $1 = server in /tmp/trial48/d.json
I=/work/notes/trial48/bin/insp.sh; S=$1
c() { echo "== $S $*"; $I /tmp/trial48/d.json $S tools/call "$@" | python3 -c '
import json,sys
t=sys.stdin.read()
try:
  d=json.loads(t)
  print("isError:",d.get("isError")); [print(" ",x.get("text","")[:600].replace("\n","\n  ")) for x in d.get("content",[])]
  if "structuredContent" in d: print("  structured:", json.dumps(d["structuredContent"])[:400])
except Exception as e: print("RAW:", t[:600])'; }
c run_shell_sandbox --tool-arg 'script=echo hi; id; ls -la /workspace 2>&1 | head; touch /workspace/t.txt && echo wrote'
c run_python_sandbox --tool-arg 'code=import os,sys; print(sys.version); print(os.listdir("/workspace") if os.path.isdir("/workspace") else "no ws")'
c run_python_sandbox --tool-arg 'code=raise SystemExit(3)'
c run_python_sandbox --tool-arg 'code=import urllib.request; urllib.request.urlopen("http://example.com", timeout=3)'
c run_shell_sandbox
c run_shell_sandbox --tool-arg 'script=1'
c run_shell_sandbox --tool-arg 'script=sleep 40' 
c run_python_sandbox --tool-arg 'script=print(1)'
c run_shell_sandbox --tool-arg 'script=head -c 200000 /dev/zero | tr "\0" a'
c read_file --tool-arg path=hello.py
c read_file --tool-arg path=/workspace/hello.py
c read_file --tool-arg path=/etc/passwd
c write_file --tool-arg path=out.py --tool-arg 'content=print(2)'
c write_file --tool-arg path=/tmp/x.txt --tool-arg 'content=x'
c write_file --tool-arg path=.git/hooks/pre-commit --tool-arg 'content=x'
c list_files
c list_files --tool-arg path=/tmp
