#!/bin/bash
# every tool of the allowlist policy, right and wrong arguments, through the Inspector CLI
I=/work/notes/trial48/bin/insp.sh; C=${1:-/tmp/trial48/allow.json}
c() { echo "== $*"; $I $C sandbox tools/call "$@" | python3 -c '
import json,sys
t=sys.stdin.read()
try:
  d=json.loads(t)
  print("isError:",d.get("isError")); [print(" ",x.get("text","")[:500].replace("\n","\n  ")) for x in d.get("content",[])]
  if "structuredContent" in d: print("  structured:", json.dumps(d["structuredContent"])[:400])
except Exception as e: print("RAW:", t[:600])'; }
c run_allowed_command --tool-arg command=wc --tool-arg 'args=["notes.txt"]'
c run_allowed_command --tool-arg command=sort --tool-arg 'args=["-r","notes.txt"]'
c run_allowed_command --tool-arg command=grep --tool-arg 'args=["-r","a","."]'
c run_allowed_command --tool-arg command=cat --tool-arg 'args=["notes.txt"]'
c run_allowed_command --tool-arg 'args=["notes.txt"]'
c run_allowed_command --tool-arg command=wc --tool-arg 'args="notes.txt"'
c run_allowed_command --tool-arg command=wc --tool-arg 'args=[1,2]'
c run_allowed_command --tool-arg command=wc --tool-arg 'args=["/etc/passwd"]'
c run_allowed_command --tool-arg command=wc --tool-arg 'args=["nosuch.txt"]'
c run_allowed_command --tool-arg command=/usr/bin/wc --tool-arg 'args=["notes.txt"]'
c run_allowed_command --tool-arg command=wc --tool-arg 'args=["notes.txt"]' --tool-arg extra=1
c run_allowed_command --tool-arg command=sort --tool-arg 'args=["-o","out.txt","notes.txt"]'
c read_file --tool-arg path=notes.txt
c read_file --tool-arg path=notes.txt --tool-arg max_bytes=2
c read_file --tool-arg path=/etc/passwd
c read_file --tool-arg path=../x
c read_file --tool-arg path=nosuch
c read_file --tool-arg path=.
c read_file
c write_file --tool-arg path=new.txt --tool-arg content=hello
c write_file --tool-arg path=sub/dir/new.txt --tool-arg content=hello
c write_file --tool-arg path=new.txt
c write_file --tool-arg path=.git/config --tool-arg content=x
c write_file --tool-arg path=CLAUDE.md --tool-arg content=x
c write_file --tool-arg path=b.bin --tool-arg content_base64=AAEC
c write_file --tool-arg path=b.bin --tool-arg content_base64=notbase64!!
c write_file --tool-arg path=b2 --tool-arg content=x --tool-arg content_base64=AAEC
c list_files
c list_files --tool-arg path=sub
c list_files --tool-arg path=notes.txt
c list_files --tool-arg path=/
c list_files --tool-arg path=nosuch
c nosuchtool
