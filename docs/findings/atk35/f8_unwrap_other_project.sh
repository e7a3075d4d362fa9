#!/bin/sh
# atk35 F8: init --unwrap NAME --client claude-code:project, run in project B, also unwraps project A's entry of
# that name (records are picked by client, scope and name; the project is not asked). Run as root; user atkann.
B=/tmp/atk35/mcpsandbox-pub; H=/home/atkann
mkdir -p /opt/atk35; cp /work/notes/atk35/fakesrv.py /opt/atk35/fakesrv; chmod 755 /opt/atk35 /opt/atk35/fakesrv
R="runuser -u atkann -- env HOME=$H PATH=/usr/bin:/bin"
rm -rf $H/projA $H/projB $H/.config/mcpsandbox/wrap* $H/.local/state/mcpsandbox
mkdir -p $H/projA $H/projB; chown atkann:atkann $H/projA $H/projB
for p in projA projB; do printf '{"mcpServers": {"db": {"command": "/opt/atk35/fakesrv", "args": ["%s"]}}}\n' $p > $H/$p/.mcp.json; chown atkann:atkann $H/$p/.mcp.json; done
cd $H/projA && $R $B init --wrap db --client claude-code:project --yes 2>&1 | grep '^wrapped'
cd $H/projB && $R $B init --wrap db --client claude-code:project --yes 2>&1 | grep '^wrapped'
echo "== in project B: init --unwrap db --client claude-code:project --yes"
cd $H/projB && $R $B init --unwrap db --client claude-code:project --yes 2>&1
echo "== project A's .mcp.json now:"; cat $H/projA/.mcp.json
