#!/bin/bash
# init --client codex appends [mcp_servers.NAME] after an inline `mcp_servers = { … }` table that its
# inline check misses: (a) a line starting with "[" earlier in a multi-line string or array,
# (b) the key spelled with a TOML escape. Codex's TOML (strict, as Python's tomllib) then refuses the whole file.
B=/tmp/atk33/mcpsandbox
run() { # $1 label, stdin = config
  H=/tmp/atk33x/cx-$1; rm -rf $H; mkdir -p $H/.codex /tmp/atk33x/cxws; cat > $H/.codex/config.toml
  cp $H/.codex/config.toml $H/orig.toml
  echo "=== $1"; (cd /tmp/atk33x && HOME=$H XDG_STATE_HOME=$H/.local/state XDG_CONFIG_HOME=$H/.config timeout 60 $B init --scheme allowlist --allow cat --workspace /tmp/atk33x/cxws --client codex --yes 2>&1 | grep -E "^(wrote|checked|error|init:)" | cut -c1-160); echo "init rc=${PIPESTATUS[0]}"
  python3 - $H <<'PY'
import tomllib,sys
H=sys.argv[1]
for f in ['orig.toml','.codex/config.toml']:
    try: b=open(H+'/'+f,'rb').read(); b=b[3:] if b.startswith(b'\xef\xbb\xbf') else b; d=tomllib.loads(b.decode()); print(' ',f,'parses; servers:',list(d.get('mcp_servers',{})))
    except Exception as e: print(' ',f,'REFUSED by a strict TOML parser:',e)
PY
}
run multiline <<'T'
model = "gpt-5"
developer_instructions = """
Always cite sources like
[1] the source
"""
mcp_servers = { docs = { command = "npx", args = ["-y", "docs-mcp"] } }
T
run array <<'T'
matrix = [
  [1, 2],
]
mcp_servers = { docs = { command = "npx", args = ["-y", "docs-mcp"] } }
T
run escaped <<'T'
"mcp\u005Fservers" = { docs = { command = "npx", args = ["-y", "docs-mcp"] } }
T
run control <<'T'
mcp_servers = { docs = { command = "npx", args = ["-y", "docs-mcp"] } }
T
printf '\xef\xbb\xbfmcp_servers = { docs = { command = "npx", args = ["-y", "docs-mcp"] } }\n' | run bom
