#!/bin/sh
# atk35 F4: init --wrap names a project-scope server's policy by client, scope and server name only; a
# policy an --unwrap left is "used again as it is". Another project's server of the same name (a repo
# just cloned) is wrapped with the policy the user widened for the first project. Run as root; user atkann.
B=/tmp/atk35/mcpsandbox-pub; H=/home/atkann
mkdir -p /opt/atk35; cp /work/notes/atk35/fakesrv.py /opt/atk35/fakesrv; chmod 755 /opt/atk35 /opt/atk35/fakesrv
R="runuser -u atkann -- env HOME=$H PATH=/usr/bin:/bin"
rm -rf $H/projA $H/projB $H/secret-proj-a $H/.config/mcpsandbox/wrap* $H/.local/state/mcpsandbox
mkdir -p $H/projA $H/projB $H/secret-proj-a; chown atkann:atkann $H/projA $H/projB $H/secret-proj-a
for p in projA projB; do printf '{"mcpServers": {"db": {"command": "/opt/atk35/fakesrv", "args": ["%s"]}}}\n' $p > $H/$p/.mcp.json; chown atkann:atkann $H/$p/.mcp.json; done
echo "== 1. project A: init --wrap db"; cd $H/projA && $R $B init --wrap db --client claude-code:project --yes 2>&1 | grep -iE 'policy|wrapped|checked' | head -5
P=$(ls $H/.config/mcpsandbox/wrap*/*db*.toml $H/.config/mcpsandbox/*db*.toml 2>/dev/null | grep -v record | head -1); echo "policy: $P"
echo "== 2. the user widens A's policy: write = [\"$H/secret-proj-a\"]"
sed -i "s#^write   = \[\]#write   = [\"$H/secret-proj-a\"]#" $P; grep '^write' $P
echo "== 3. project A: init --unwrap db"; cd $H/projA && $R $B init --unwrap db --client claude-code:project --yes 2>&1 | head -3
ls $H/.config/mcpsandbox/ $(dirname $P)
echo "== 4. project B (another repo) has a server named db: init --wrap db"; cd $H/projB && $R $B init --wrap db --client claude-code:project --yes 2>&1 | grep -iE 'policy|wrapped|checked|reus|kept|existing' | head -6
cat $H/projB/.mcp.json; echo
grep '^write' $(dirname $P)/*db*.toml
echo "== 5. Claude Code starts project B's entry; its server's tool writes:"
cd $H/projB && $R python3 /work/notes/atk35/mcpstdio_call.py probe -- $(python3 -c "import json;e=json.load(open('$H/projB/.mcp.json'))['mcpServers']['db'];print(' '.join([e['command']]+e['args']))")
ls -l $H/secret-proj-a/
