#!/bin/bash
# wrap's error paths: no "--", a command that differs from [wrap].command, an allowlist policy, a relative command not on PATH, a server that prints junk on stdout
. /work/notes/trial49/env.sh; cd /tmp/trial49
P=/tmp/trial49/f7/py.toml
echo "== no --"; timeout 10 mcpsandbox wrap --policy $P /usr/bin/python3 /tmp/trial49/srv/pysrv.py </dev/null 2>&1 | tail -1
echo "== allowlist policy"; timeout 10 mcpsandbox wrap --policy $XDG_CONFIG_HOME/mcpsandbox/policy.toml -- /usr/bin/python3 /tmp/trial49/srv/pysrv.py </dev/null 2>&1 | tail -1
echo "== [wrap].command set, another on the command line"; sed 's#^\[wrap\]#[wrap]\ncommand = ["/usr/bin/python3", "/tmp/trial49/srv/pysrv.py"]#' $P > /tmp/trial49/f7/cmd.toml
timeout 10 mcpsandbox wrap --policy /tmp/trial49/f7/cmd.toml -- /usr/bin/python3 /tmp/trial49/srv/other.py </dev/null 2>&1 | tail -1
echo "== server not on PATH"; timeout 10 mcpsandbox wrap --policy $P -- nosuchmcpserver </dev/null 2>&1 | tail -1
echo "== server prints a banner on stdout before MCP"; printf '#!/bin/sh\necho "Server starting on stdio..."\nexec /usr/bin/python3 /tmp/trial49/srv/pysrv.py\n' > /tmp/trial49/srv/banner.sh; chmod +x /tmp/trial49/srv/banner.sh
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' | (cat; sleep 1.5) | timeout 10 mcpsandbox wrap --policy $P -- /tmp/trial49/srv/banner.sh 2>&1 | cut -c1-300
echo "== no --, and the server's own flag (-u) after its program"
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' | (cat; sleep 1.5) | timeout 10 mcpsandbox wrap --policy $P /usr/bin/python3 -u /tmp/trial49/srv/pysrv.py 2>&1 | cut -c1-300
echo "== no --, npx -y (README's example)"; timeout 10 mcpsandbox wrap --policy $P npx -y @modelcontextprotocol/server-everything </dev/null 2>&1 | tail -2 | cut -c1-300
