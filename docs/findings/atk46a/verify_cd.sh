#!/bin/bash
# each command line as a hook (sh -c, from the project, CLAUDE_PROJECT_DIR set), as .mcp.json's sh -c / bash -c
d=$(mktemp -d); cd "$d"; mkdir -p server
echo 'import helper; print("RAN server/main.py")' > server/main.py; echo 'print("RAN server/helper.py")' > server/helper.py
export CLAUDE_PROJECT_DIR=$d
while IFS= read -r c; do
  printf '%-52s sh: %s| bash: %s\n' "$c" "$(sh -c "$c" 2>&1 | tr '\n' ' ')" "$(bash -c "$c" 2>&1 | tr '\n' ' ')"
done <<'LIST'
cd server && python3 main.py
cd "$CLAUDE_PROJECT_DIR"/server && python3 main.py
(cd server && python3 main.py)
cd server; python3 main.py
LIST
rm -rf "$d"
