#!/bin/bash
# policy file reached through a chain of links whose middle link lies in a world-writable (non-sticky) directory
# /tmp/atk33x/anc/given/l1 -> /tmp/atk33x/anc/mid/l2 -> /tmp/atk33x/anc/real ; anc/mid is 0777
B=/tmp/atk33/mcpsandbox
export HOME=/tmp/atk33/home XDG_STATE_HOME=/tmp/atk33/home/.local/state
ls -ld /tmp/atk33x/anc/mid /tmp/atk33x/anc/given/l1 /tmp/atk33x/anc/mid/l2
for p in /tmp/atk33x/anc/given/l1/pol.toml /tmp/atk33x/anc/mid/l2/pol.toml; do
 echo "== serve --policy $p"; timeout 5 $B serve --policy $p </dev/null 2>&1 | grep -E "serving|refus|writable|error" | cut -c1-250
done
