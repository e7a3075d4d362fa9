#!/bin/bash
# XDG_STATE_HOME relative: init's project-file backups land relative to the current directory (inside the repo),
# where the fix for trial32 F17 meant them to leave the work tree.
P=/tmp/atk33x/proj; H=/tmp/atk33x/relhome; rm -rf $P $H; mkdir -p $P/.vscode $H /tmp/atk33x/cxws
cd $P && git init -q . && echo '{"servers": {"db": {"command": "x", "env": {"DB_PASSWORD": "hunter2-atk33"}}}}' > .vscode/mcp.json
HOME=$H XDG_STATE_HOME=state XDG_CONFIG_HOME=$H/.config timeout 60 /tmp/atk33/mcpsandbox init --scheme allowlist --allow cat --workspace /tmp/atk33x/cxws --client vscode --yes 2>&1 | grep -E "wrote|backup|old file" | cut -c1-220
echo "--- git status (untracked files a 'git add -A' publishes):"; git status --porcelain -uall
grep -rl hunter2 $P/state 2>/dev/null
