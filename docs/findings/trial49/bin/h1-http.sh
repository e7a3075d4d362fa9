#!/bin/bash
# serve --http with a bearer token (session policy), the Inspector CLI and the TS SDK
. /work/notes/trial49/env.sh
export MCPSANDBOX_TOKEN=trial49-token-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
nice -n 10 mcpsandbox serve --policy /tmp/trial49/dsess.toml --http 127.0.0.1:18749 2>/tmp/trial49/http.err & SP=$!
sleep 2
U=http://127.0.0.1:18749/mcp
IN() { timeout 60 mcp-inspector --cli $U --transport http "$@" 2>&1 | grep -v 'keychain\|Keychain\|MCP_INSPECTOR_SECRET\|Secrets are\|secret store' | grep -v '"type": "text",$' | head -c ${N:-900}; echo; }
echo "== Inspector, tools/list with the token"; IN --header "Authorization: Bearer $MCPSANDBOX_TOKEN" --method tools/list | grep '"name"'
echo "== Inspector, call with the token"; IN --header "Authorization: Bearer $MCPSANDBOX_TOKEN" --method tools/call --tool-name run_python_sandbox --tool-arg 'code=print(6*7)'
echo "== Inspector, no header"; N=400 IN --method tools/list
echo "== Inspector, wrong token, --stored-auth-only"; N=400 IN --header "Authorization: Bearer wrong" --stored-auth-only --method tools/list
echo "== curl: Origin evil"; curl -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $MCPSANDBOX_TOKEN" -H 'Origin: http://evil.example' -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' $U
echo "== SDK session over HTTP"; (cd /tmp/trial49/node && timeout 120 node sess.mjs http $U 2>&1 | head -8)
echo "== session containers now (Inspector sessions left without DELETE hold none past their call?)"; docker ps --format '{{.Names}} {{.Status}}' | grep -c . 
kill -TERM $SP; wait $SP; echo "serve exit $?"; sleep 2; echo "containers after: $(docker ps -aq | wc -l)"
grep -E 'WARN|ERROR|refused' /tmp/trial49/http.err | sed "s/$MCPSANDBOX_TOKEN/<token>/g" | cut -c1-300 | head
