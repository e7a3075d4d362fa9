#!/bin/bash
# F2: (root) an allowlist workspace nobody may write: serve's log says workspace_writable=true, --check is silent,
# and write_file's refusal does not say the fix that init and verify give
. /work/notes/trial48/bin/fresh.sh f2; mkdir -p $HOME/ws; echo hi > $HOME/ws/a.txt
set -x
ls -ld $HOME/ws
mcpsandbox init --scheme allowlist --allow wc --workspace $HOME/ws --print --yes > $HOME/s.json
mcpsandbox serve --policy $XDG_CONFIG_HOME/mcpsandbox/policy.toml --check 2>&1 | grep -i -c 'owner\|chown\|not theirs\|cannot write'
ERRF=$HOME/serve.err /work/notes/trial48/bin/insp.sh $HOME/s.json sandbox tools/call write_file --tool-arg path=b.txt --tool-arg content=x
ERRF=$HOME/serve.err /work/notes/trial48/bin/insp.sh $HOME/s.json sandbox tools/call run_allowed_command --tool-arg command=wc --tool-arg 'args=["--version"]' >/dev/null
grep -v inspector $HOME/serve.err | grep 'serving\|WARN\|refused' | cut -c1-400
mcpsandbox verify --policy $XDG_CONFIG_HOME/mcpsandbox/policy.toml 2>&1 | grep -A2 MS113
