#!/bin/bash
# wrap a hand-written python stdio MCP server (no SDK), policy written by hand per README "Wrap another MCP server"
. /work/notes/trial49/env.sh
D=/tmp/trial49/w1; rm -rf $D; mkdir -p $D/data
cat > $D/py.toml <<T
version = 1
scheme  = "wrap"
name    = "pysrv"
[audit]
path = "$D/audit.jsonl"
[wrap]
command = []
read  = ["/tmp/trial49/srv"]
write = ["$D/data"]
env   = ["MY_TOKEN"]
network = false
[wrap.tools]
allow = []
deny  = ["secret_*"]
hide_denied = true
T
echo "secret-home-file" > $HOME/.secretrc
I() { timeout 60 mcp-inspector --cli mcpsandbox wrap --policy $D/py.toml --explain-denials -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py "$@" 2>&1 | grep -v '^Schema portability' | head -c 1500; echo; }
echo "== tools/list"; I --method tools/list | grep '"name"'
echo "== echo"; I --method tools/call --tool-name echo --tool-arg text=hi
echo "== denied secret_dump"; I --method tools/call --tool-name secret_dump
echo "== read HOME file"; I --method tools/call --tool-name readfile --tool-arg path=$HOME/.secretrc
echo "== read /etc/shadow"; I --method tools/call --tool-name readfile --tool-arg path=/etc/shadow
echo "== write data dir"; I --method tools/call --tool-name writefile --tool-arg path=$D/data/out.txt text=ok; ls -ln $D/data
echo "== write outside"; I --method tools/call --tool-name writefile --tool-arg path=$D/evil.txt text=bad; ls $D
echo "== env (MY_TOKEN set in client env)"; MY_TOKEN=tok123 OTHER_SECRET=zzz I --method tools/call --tool-name env
echo "== audit verify"; mcpsandbox audit verify $D/audit.jsonl; tail -2 $D/audit.jsonl
