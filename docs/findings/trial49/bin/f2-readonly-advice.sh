#!/bin/bash
# a policy or client config on a read-only file system (a read-only bind mount, or chattr +i): is init's advice right?
. /work/notes/trial49/env.sh
T=/tmp/trial49/f2; rm -rf $T; mkdir -p $T/ro; cd $T
P=$XDG_CONFIG_HOME/mcpsandbox/policy.toml
cp $P ro/p.toml; ls -l ro/p.toml
mount --bind ro ro && mount -o remount,bind,ro ro && echo "ro/ is now a read-only bind mount"
echo "== init --force --policy-out ro/p.toml"
mcpsandbox init --scheme allowlist --allow wc --workspace /tmp/trial49/ws --policy-out ro/p.toml --force --print --yes 2>&1 | tail -1
echo "== following the advice:"; chmod u+w ro/p.toml; echo "chmod rc=$?"
umount ro
echo "== a client config made immutable (chattr +i), no entry yet"
mkdir -p $HOME/.codeium/windsurf; chmod 755 $HOME/.codeium/windsurf; echo '{"mcpServers":{}}' > $HOME/.codeium/windsurf/mcp_config.json; rm -f $HOME/.codeium/windsurf/*.bak-*
chattr +i $HOME/.codeium/windsurf/mcp_config.json && lsattr $HOME/.codeium/windsurf/mcp_config.json
mcpsandbox init --policy $P --client windsurf --yes 2>&1 | tail -2
echo "== following the advice:"; chmod u+w $HOME/.codeium/windsurf/mcp_config.json; echo "chmod rc=$? mode $(stat -c %A $HOME/.codeium/windsurf/mcp_config.json)"
mcpsandbox init --policy $P --client windsurf --yes 2>&1 | tail -1
chattr -i $HOME/.codeium/windsurf/mcp_config.json; ls $HOME/.codeium/windsurf
