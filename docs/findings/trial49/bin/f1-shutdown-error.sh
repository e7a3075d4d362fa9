#!/bin/bash
# docker policy with a writable workspace (owned by the containers' user: nothing wrong with it). A client that starts serve,
# lists tools (or makes a call) and leaves within ~1 s, as `claude mcp list`, init's check or a one-shot client do:
# serve's log (the client's MCP log; init's "it said:") reads "serve cannot run a call on this policy here ... every call is refused"
. /work/notes/trial49/env.sh
mkdir -p /tmp/trial49/dws2; chown 65534:65534 /tmp/trial49/dws2; cd /tmp/trial49
for ws in no yes; do
cat > /tmp/trial49/dok.toml <<T
version = 1
scheme = "docker"
name = "dok"
[audit]
path = "/tmp/trial49/dok-audit.jsonl"
[docker]
image = "mcpsandbox-test:bookworm"
T
[ $ws = yes ] && printf 'workspace = "/tmp/trial49/dws2"\nworkspace_writable = true\n' >> /tmp/trial49/dok.toml
for s in 0.3 0.8 3; do
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
   | (cat; sleep $s) | timeout 30 mcpsandbox serve --policy /tmp/trial49/dok.toml 2>/tmp/trial49/f1.err >/dev/null
  echo "writable workspace=$ws, tools/list only, stdin closed after $s s: ERROR lines: $(grep -c 'level=ERROR' /tmp/trial49/f1.err)"
  grep 'level=ERROR' /tmp/trial49/f1.err | cut -c1-420
done; done
echo "== the same policy, serve --check (nothing wrong with it):"; timeout 120 mcpsandbox serve --policy /tmp/trial49/dok.toml --check 2>&1 | grep -i 'workspace\|error' | cut -c1-200 | head -4
