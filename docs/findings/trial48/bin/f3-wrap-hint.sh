#!/bin/bash
# F3: init --wrap of a local node script (not an npm package) whose import path the sandbox hides:
# the failure ends with npm-cache advice ("run the server once with network = [registry.npmjs.org], or npx -y PKG once")
. /work/notes/trial48/bin/fresh.sh f3; cd $HOME
claude mcp add -s user echo -- /usr/bin/node /tmp/trial48/echo/server.mjs >/dev/null 2>&1
set -x
mcpsandbox init --wrap echo --client claude-code:user --yes 2>&1 | grep -v '^  server:     at '
P=$XDG_CONFIG_HOME/mcpsandbox/wrap/claude-code-user-echo.toml
sed -i 's|^read    = \[\]|read    = ["/tmp/trial48/echo/server.mjs"]|' $P; grep '^read' $P
mcpsandbox init --wrap echo --client claude-code:user --yes 2>&1 | grep -v '^  server:     at '
