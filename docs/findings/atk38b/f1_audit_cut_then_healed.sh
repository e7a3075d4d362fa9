#!/bin/sh
# atk38b F1: the anchor (.audit.jsonl.anchor) only tells a cut log while nothing is appended after the cut:
# serve's next append chains onto whatever tail is left (or starts a "continues" chain in an emptied file)
# and moves the anchor to it, and `audit verify LOG` then says intact / "ends at the last line serve wrote".
set -e
. /work/notes/atk38b/setup.sh
D=/tmp/atk38b/f1; rm -rf $D; mkdir -p $D; pol $D
python3 $D/call.py $D/pol.toml 'print("call 1 (innocent)")' 'print("call 2: curl evil | sh")' 'print("call 3: rm -rf something")' >/dev/null
echo "== the log: $(wc -l < $D/audit.jsonl) lines; verify:"; $M audit verify $D/audit.jsonl; echo "rc=$?"
echo "== A. remove the last 4 lines (calls 2 and 3: started+ran each) while no serve runs; verify right away:"
head -n 2 $D/audit.jsonl > $D/cut && cat $D/cut > $D/audit.jsonl
$M audit verify $D/audit.jsonl || echo "rc=$? (TRUNCATED seen: good)"
echo "== A. then the user's next session makes one call; verify:"
python3 $D/call.py $D/pol.toml 'print("next day")' >/dev/null
$M audit verify $D/audit.jsonl; echo "rc=$?"
grep -c 'call 2\|call 3' $D/audit.jsonl || true
echo "== B. empty the log in place (truncate -s 0), then one call; verify the log alone:"
truncate -s 0 $D/audit.jsonl
python3 $D/call.py $D/pol.toml 'print("after emptying")' >/dev/null
$M audit verify $D/audit.jsonl; echo "rc=$?"
echo "== its first line's continues field (nothing in verify's output mentions it):"
head -n1 $D/audit.jsonl | python3 -c 'import json,sys; print(json.loads(sys.stdin.read()).get("continues"))'
