#!/bin/bash
# allowlist file tools and workspace commit through the Inspector CLI (entry init --print wrote)
. /work/notes/trial49/env.sh
W=/tmp/trial49/ws
I() { timeout 60 mcp-inspector --cli --config /tmp/trial49/servers.json --server sandbox "$@" 2>/dev/null | grep -v '"type": "text",$' | head -c ${N:-1200}; echo; }
echo "== write_file notes/a.txt"; I --method tools/call --tool-name write_file --tool-arg path=notes/a.txt 'content=hello world'
echo "== list_files"; N=600 I --method tools/call --tool-name list_files
echo "== read_file notes/a.txt"; N=500 I --method tools/call --tool-name read_file --tool-arg path=notes/a.txt
echo "== command that edits a file: sed -i"; I --method tools/call --tool-name run_allowed_command --tool-arg command=sed 'args=["-i","s/hello/HELLO/","notes/a.txt"]'
cat $W/notes/a.txt
echo "== sort -o sorted.txt in.txt"; I --method tools/call --tool-name run_allowed_command --tool-arg command=sort 'args=["-o","sorted.txt","in.txt"]'
echo "== write_file .envrc (protected)"; I --method tools/call --tool-name write_file --tool-arg path=.envrc 'content=export X=1'
echo "== write_file .git/hooks/pre-commit"; I --method tools/call --tool-name write_file --tool-arg path=.git/hooks/pre-commit 'content=#!/bin/sh'
echo "== sed writes a protected file and a normal one in one call (tee)"; I --method tools/call --tool-name run_allowed_command --tool-arg command=tee 'args=["ok.txt",".envrc"]'
ls -la $W
