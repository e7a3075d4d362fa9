#!/bin/bash
# TestAtk45aHookQuotedProjectDir's APPLIED forms as Claude Code runs a hook (sh -c, CLAUDE_PROJECT_DIR set)
d=$(mktemp -d /tmp/atk45a/vh.XXXX); mkdir -p $d/scripts
printf '#!/bin/bash\necho RAN scripts/fmt.sh\n' > $d/scripts/fmt.sh; chmod +x $d/scripts/fmt.sh
echo 'print("RAN scripts/fmt.py")' > $d/scripts/fmt.py
for c in '"$CLAUDE_PROJECT_DIR"/scripts/fmt.sh' '"${CLAUDE_PROJECT_DIR}"/scripts/fmt.sh' 'python3 "$CLAUDE_PROJECT_DIR"/scripts/fmt.py' 'bash "$CLAUDE_PROJECT_DIR"/scripts/fmt.sh'; do
  printf '%-48s -> %s\n' "$c" "$(cd /; CLAUDE_PROJECT_DIR=$d sh -c "$c" 2>&1)"
done
rm -rf $d
