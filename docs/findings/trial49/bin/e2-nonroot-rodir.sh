#!/bin/bash
# as an unprivileged user (nobody, its own HOME): a client config dir that is read-only (mode 555), the file absent or present;
# a dangling symlinked config; a policy dir that is read-only
. /work/notes/trial49/env.sh
N=/tmp/trial49/nhome; rm -rf $N; mkdir -p $N/bin $N/ws; cp /tmp/trial49/home/bin/mcpsandbox $N/bin/; chown -R 65534:65534 $N; chmod 755 /tmp/trial49
run() { setpriv --reuid 65534 --regid 65534 --clear-groups env -i HOME=$N PATH=$N/bin:/usr/bin:/bin XDG_CONFIG_HOME=$N/.config XDG_STATE_HOME=$N/.local/state "$@"; }
run mcpsandbox init --scheme allowlist --allow wc --workspace $N/ws --yes 2>&1 | tail -2
echo "== 1 ~/.cursor is mode 555, mcp.json absent"
run mkdir -p $N/.cursor; chmod 555 $N/.cursor
run mcpsandbox init --policy $N/.config/mcpsandbox/policy.toml --client cursor --yes 2>&1 | tail -2; echo "rc=${PIPESTATUS[0]}"; ls -la $N/.cursor
echo "== 2 ~/.cursor mode 555, mcp.json present (mode 644) with another server"
chmod 755 $N/.cursor; echo '{"mcpServers":{"other":{"command":"x"}}}' > $N/.cursor/mcp.json; chown 65534:65534 $N/.cursor/mcp.json; chmod 555 $N/.cursor; cp $N/.cursor/mcp.json /tmp/trial49/c2.before
run mcpsandbox init --policy $N/.config/mcpsandbox/policy.toml --client cursor --yes 2>&1 | tail -2; cmp /tmp/trial49/c2.before $N/.cursor/mcp.json && echo "cursor config unchanged"; ls -la $N/.cursor
echo "== 3 ~/.codeium/windsurf/mcp_config.json a dangling symlink (dotfiles not yet checked out)"
run mkdir -p $N/.codeium/windsurf $N/dotfiles; run ln -s $N/dotfiles/windsurf.json $N/.codeium/windsurf/mcp_config.json
run mcpsandbox init --policy $N/.config/mcpsandbox/policy.toml --client windsurf --yes 2>&1 | tail -3; ls -la $N/.codeium/windsurf $N/dotfiles
echo "== 4 a symlink loop"
run ln -s $N/.gemini/settings.json.loop $N/loop1; run mkdir -p $N/.gemini; run ln -s $N/loop1 $N/.gemini/settings.json; run ln -sf $N/.gemini/settings.json $N/.gemini/settings.json.loop
run mcpsandbox init --policy $N/.config/mcpsandbox/policy.toml --client gemini --yes 2>&1 | tail -2
echo "== 5 policy dir read-only, init --force"
chmod 555 $N/.config/mcpsandbox
run mcpsandbox init --scheme allowlist --allow wc,sort --workspace $N/ws --force --print --yes 2>&1 | tail -2
chmod 755 $N/.config/mcpsandbox
