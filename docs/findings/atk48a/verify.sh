#!/bin/bash
# verify.sh: run each APPLIED hook line with the real shells (dash as sh, bash) from a workspace's root,
# CLAUDE_PROJECT_DIR set, as Claude Code / lefthook run a command string (sh -c).
set -u
ws=$(mktemp -d /tmp/atk48a/ws.XXXX); cd "$ws"
mkdir -p server app; echo 'print("RAN server/main.py")' > server/main.py; echo 'X=1' > server/helper.py
git init -q . 2>/dev/null
export CLAUDE_PROJECT_DIR=$ws
lines=(
  $'SRV=server sh -c \'cd "$SRV" && python3 main.py\''
  $'export SRV=server; sh <<\'EOF\'\ncd "$SRV" && python3 main.py\nEOF'
  'cd serv* && python3 main.py'
  'cd s?rver && python3 main.py'
  'cd "$CLAUDE_PROJECT_DIR"/serv*/ && python3 main.py'
  'python3 server/[[:lower:]]ain.py'
  $'bash -c \'cd {server,} && python3 main.py\''
  'cd "$(git rev-parse --show-toplevel)/server" && python3 main.py'
  'find server -name main.py -execdir python3 {} \;'
)
for l in "${lines[@]}"; do
  for sh in sh bash; do
    out=$(cd "$ws" && $sh -c "$l" 2>&1 | tr '\n' ' ')
    printf '%-5s %-70s -> %s\n' "$sh" "$(printf %s "$l" | tr '\n' '/')" "$out"
  done
done
# lefthook root: (lefthook not installed) run as lefthook runs a command: sh -c RUN from ROOT
( cd "$ws/server" && sh -c 'python3 main.py' ) | sed 's/^/lefthook root: server\/ (cwd=server, sh -c "python3 main.py") -> /'
readlink -f /bin/sh; bash --version | head -1; python3 --version
rm -rf "$ws"
