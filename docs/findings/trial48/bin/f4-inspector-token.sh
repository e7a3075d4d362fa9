#!/bin/bash
# F4: serve --http with a token; the Inspector (as README/init tell) with a wrong token shows an OAuth error, not serve's 401 text
. /work/notes/trial48/bin/fresh.sh f4; cd $HOME
mcpsandbox init --scheme allowlist --allow wc --workspace $HOME/ws --print --yes >/dev/null 2>&1
export MCPSANDBOX_TOKEN=right-token-0123456789abcdef
mcpsandbox serve --policy $XDG_CONFIG_HOME/mcpsandbox/policy.toml --http 127.0.0.1:8766 2>$HOME/http.err & PID=$!; sleep 2
mcpsandbox init --http http://127.0.0.1:8766/mcp --token-env MCPSANDBOX_TOKEN --print --yes > $HOME/h.json 2>$HOME/h.err
grep -o 'npx[^)]*--header[^;]*' $HOME/h.err | head -1
set -x
cd /tmp/trial48/node
timeout 60 npx @modelcontextprotocol/inspector --cli --config $HOME/h.json --server sandbox --header "Authorization: Bearer wrong" --method tools/list 2>&1 | grep -v 'mcp-inspector'
timeout 60 npx @modelcontextprotocol/inspector --cli --config $HOME/h.json --server sandbox --method tools/list 2>&1 | grep -v 'mcp-inspector'
curl -s -o /dev/null -D - -X POST http://127.0.0.1:8766/mcp -H 'Authorization: Bearer wrong' -d '{}' | grep -i 'www-auth\|HTTP/'
MCPSANDBOX_TOKEN=wrong claude mcp add -s user --transport http sb http://127.0.0.1:8766/mcp -H 'Authorization: Bearer ${MCPSANDBOX_TOKEN}' >/dev/null 2>&1
MCPSANDBOX_TOKEN=wrong claude mcp get sb | grep -i 'status\|issue'
set +x; kill $PID
