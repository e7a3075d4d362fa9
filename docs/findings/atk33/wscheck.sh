#!/bin/bash
# usage: wscheck.sh WORKSPACE [extra env...]  -> starts serve with a policy whose workspace is WORKSPACE, prints accept/refuse
ws="$1"; shift
sed "s#^workspace = .*#workspace = \"$ws\"#" /tmp/atk33x/pol.toml > /tmp/atk33x/polws.toml
out=$(env HOME=${H:-/tmp/atk33/home} XDG_STATE_HOME=/tmp/atk33/home/.local/state "$@" timeout 10 /tmp/atk33/mcpsandbox serve --policy /tmp/atk33x/polws.toml </dev/null 2>&1)
if echo "$out" | grep -qi "refus\|error\|workspace .*is\|contains\|lies in"; then echo "REFUSED $ws: $(echo "$out" | grep -i workspace | head -2 | cut -c1-250)"; else echo "ACCEPTED $ws: $(echo "$out" | grep -i workspace | head -1 | cut -c1-200)"; fi
