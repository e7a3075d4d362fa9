#!/bin/bash
# a command's writes, one protected (hidden in a sed script, not an argument) and one not: what is applied, what is said
. /work/notes/trial49/env.sh
W=/tmp/trial49/ws
I() { timeout 60 mcp-inspector --cli --config /tmp/trial49/servers.json --server sandbox "$@" 2>/dev/null | grep -v '"type": "text",$' | head -c ${N:-2500}; echo; }
printf 'b\na\nc\n' > $W/in.txt; chown 65534:65534 $W/in.txt
echo "== sed -i edits in.txt and writes .envrc through its w command"
I --method tools/call --tool-name run_allowed_command --tool-arg command=sed 'args=["-i","-e","s/a/A/","-e","w .envrc","in.txt"]'
echo "-- host after:"; cat $W/in.txt; ls -la $W/.envrc 2>&1; ls -la $W | grep -i keep; find / -xdev -name '*.refused*' -newer $W/sorted.txt 2>/dev/null | head
echo "== same through a path in a git dir (.git/config)"
I --method tools/call --tool-name run_allowed_command --tool-arg command=sed 'args=["-n","-e","w .git/config","in.txt"]'
git -C $W config -l | head -3
