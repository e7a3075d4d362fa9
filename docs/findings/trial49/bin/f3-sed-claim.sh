#!/bin/bash
# explain/verify say an allowlisted sed "runs any code it is given, and through the ELF interpreter (ld.so PROGRAM) any program
# installed on this host"; try every way GNU sed starts a program (e command, s///e flag), via ld.so too
. /work/notes/trial49/env.sh
P=$XDG_CONFIG_HOME/mcpsandbox/policy.toml
mcpsandbox explain --policy $P 2>&1 | grep -n 'sed'
mcpsandbox verify --policy $P --no-harness 2>&1 | grep -A1 MS101
I() { timeout 60 mcp-inspector --cli --config /tmp/trial49/servers.json --server sandbox --method tools/call --tool-name run_allowed_command --tool-arg command=sed "args=$1" 2>/dev/null | grep '"text"' | head -c 300; echo; }
for a in '["1e id","in.txt"]' '["1e /lib64/ld-linux-x86-64.so.2 /usr/bin/id","in.txt"]' '["s/.*/id/e","in.txt"]' '["s|.*|/lib64/ld-linux-x86-64.so.2 /usr/bin/id|e","in.txt"]' '["1e /usr/bin/sort in.txt","in.txt"]'; do echo "== sed $a"; I "$a"; done
