#!/bin/bash
# init --wrap (Codex): the entry's `command = …` is found by a line regex, which matches a line inside a
# multi-line string before the real key: the string is rewritten, the real command is left as it was.
H=/tmp/atk33x/cw2; rm -rf $H /tmp/atk33x/fakesrv.argv; mkdir -p $H/.codex; cat > $H/.codex/config.toml <<'T'
[mcp_servers.docs]
startup_note = """
command = "npx"
"""
command = "/tmp/atk33x/fakesrv"
args = ["--stdio"]
T
cd /tmp/atk33x && HOME=$H XDG_STATE_HOME=$H/.local/state XDG_CONFIG_HOME=$H/.config timeout 60 /tmp/atk33/mcpsandbox init --wrap docs --client codex --yes 2>&1 | cut -c1-250 | head
echo "--- config now:"; cat $H/.codex/config.toml
echo "--- as a TOML reader sees it:"; python3 -c "import tomllib,json; print(json.dumps(tomllib.load(open('$H/.codex/config.toml','rb'))['mcp_servers']['docs']))"
echo "--- argv the server was started with (init's trial):"; cat /tmp/atk33x/fakesrv.argv
