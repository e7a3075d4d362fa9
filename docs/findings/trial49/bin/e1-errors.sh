#!/bin/bash
# error paths a newcomer hits: malformed policy, missing binary, malformed client config, read-only config dir
. /work/notes/trial49/env.sh
T=/tmp/trial49/e1; rm -rf $T; mkdir -p $T; cd $T
P=$XDG_CONFIG_HOME/mcpsandbox/policy.toml
echo "== 1 malformed policy (unclosed string at line 5)"; sed '5s/$/ "oops/' $P > bad1.toml; sed -n 5p bad1.toml
mcpsandbox serve --policy bad1.toml </dev/null 2>&1 | tail -2; echo "rc=$?"
mcpsandbox verify --policy bad1.toml 2>&1 | tail -2
echo "== 2 wrong type (max_concurrent = \"four\")"; sed 's/^max_concurrent *= 4/max_concurrent = "four"/' $P > bad2.toml
mcpsandbox explain --policy bad2.toml 2>&1 | tail -2
echo "== 3 missing binary: an allowlisted command whose path is gone"; mkdir -p bin; cp /usr/bin/wc bin/mywc
sed "s#^path *= *\"/usr/bin/wc\"#path = \"$T/bin/mywc\"#; s#7480f7cb7110af0f45b6e04b50f8d1fb2c6392cf911cb3a28c516ef1b725823e#$(sha256sum bin/mywc | cut -d' ' -f1)#" $P > miss.toml; grep -n mywc miss.toml; rm bin/mywc
timeout 20 mcpsandbox serve --policy miss.toml </dev/null 2>&1 | tail -2
mcpsandbox verify --policy miss.toml 2>&1 | grep -v '^   ok' | head -12
echo "== 4 wrap of a missing binary"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' | timeout 20 mcpsandbox wrap --policy /tmp/trial49/w1/py.toml -- /usr/bin/nosuchserver --x 2>&1 | tail -3
echo "== 5 init into a malformed client config (cursor mcp.json, trailing garbage at line 3)"
mkdir -p $HOME/.cursor; printf '{\n  "mcpServers": {"a": {"command": "x"}}\n  oops\n}\n' > $HOME/.cursor/mcp.json; cp $HOME/.cursor/mcp.json c.before
mcpsandbox init --policy $P --client cursor --yes 2>&1 | tail -3; cmp c.before $HOME/.cursor/mcp.json && echo "cursor config unchanged"; ls $HOME/.cursor
echo "== 6 init into a read-only config dir (~/.codeium/windsurf mode 555, as root!)"
mkdir -p $HOME/.codeium/windsurf; echo '{"mcpServers":{}}' > $HOME/.codeium/windsurf/mcp_config.json; chmod 555 $HOME/.codeium/windsurf
mcpsandbox init --policy $P --client windsurf --yes 2>&1 | tail -3; ls -la $HOME/.codeium/windsurf; cat $HOME/.codeium/windsurf/mcp_config.json
echo "== 6b chattr +i on the file (read-only even for root)"; chmod 755 $HOME/.codeium/windsurf
chattr +i $HOME/.codeium/windsurf/mcp_config.json 2>&1 && { mcpsandbox init --policy $P --client windsurf --yes 2>&1 | tail -3; chattr -i $HOME/.codeium/windsurf/mcp_config.json; ls $HOME/.codeium/windsurf; }
echo "== 7 read-only policy dir: init --force over a policy in a 555 dir"
mkdir -p ro; cp $P ro/p.toml; chmod 555 ro; mount --bind ro ro 2>/dev/null && mount -o remount,bind,ro ro 2>/dev/null && echo "(ro bind mount)"
mcpsandbox init --scheme allowlist --allow wc --workspace /tmp/trial49/ws --policy-out ro/p.toml --force --print --yes 2>&1 | tail -3; cmp $P ro/p.toml && echo "policy unchanged"; umount ro 2>/dev/null
