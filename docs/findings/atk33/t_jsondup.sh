#!/bin/bash
# JSON client configs with a key spelled twice in ways a JSON.parse client reads differently
B=/tmp/atk33/mcpsandbox
run() { H=/tmp/atk33x/js-$1; rm -rf $H; mkdir -p $H/.config/Claude /tmp/atk33x/cxws; cat > $H/.config/Claude/claude_desktop_config.json
 echo "=== $1"; (cd /tmp/atk33x && HOME=$H XDG_STATE_HOME=$H/.local/state XDG_CONFIG_HOME=$H/.config timeout 60 $B init --scheme allowlist --allow cat --workspace /tmp/atk33x/cxws --client claude-desktop --yes 2>&1 | grep -E "^(wrote|checked|error|init:|mcpsandbox)" | cut -c1-220)
 node -e 'const j=JSON.parse(require("fs").readFileSync(process.argv[1]));console.log("  JSON.parse servers:",Object.keys(j.mcpServers||{}))' $H/.config/Claude/claude_desktop_config.json 2>&1 | tail -1; }
run esc <<'T'
{"mcpServers": {"docs": {"command": "npx"}}, "mcp\u0053ervers": {"other": {"command": "x"}}}
T
run escname <<'T'
{"mcpServers": {"sandbo\u0078": {"command": "npx"}}}
T
run bom <<'T'
{"mcpServers": {}, "x": "\ud800"}
T
