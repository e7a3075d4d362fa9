#!/bin/sh
# F5: the follower's commit cost is keys x specifiers: mapped() (and tsPaths) scan every key of an "imports"/"exports"
# (or "paths") map for each specifier without an exact key; the 32,768-lookup bound counts specifiers, not the scan.
# A repository (host content) whose protected program names K=${K:-25000} pattern keys' worth of "#" specifiers
# makes every call's commit (under the workspace lock) take seconds; at 8 MiB package.json (~250k keys) 10x that.
set -e
K=${K:-25000}; N=${N:-32000}
D=/tmp/atk39b/f5; rm -rf $D; mkdir -p $D/ws/server; cd $D/ws
PY3=$(readlink -f /usr/bin/python3)
cat > $D/pol.toml <<P
version = 1
scheme  = "allowlist"
name    = "sandbox"
[audit]
path = "$D/audit.jsonl"
[allowlist]
workspace = "$D/ws"
network   = false
[[allowlist.commands]]
name   = "python3"
path   = "$PY3"
sha256 = "$(sha256sum $PY3 | cut -d' ' -f1)"
P
echo '{ "mcpServers": { "s": { "command": "node", "args": ["server/index.js"] } } }' > .mcp.json
python3 - $K $N <<'PY'
import json, sys
K, N = int(sys.argv[1]), int(sys.argv[2])
json.dump({"name": "srv", "imports": {"#p%d/*" % i: "./x%d/*.js" % i for i in range(K)}}, open("server/package.json", "w"))
open("server/index.js", "w").write("".join("require('#p%d/m');\n" % (i % K) if i < K else "require('#q%d');\n" % i for i in range(N)))
PY
ls -la server/; chown -R 65534:65534 $D/ws
cp /work/notes/atk39b/stdio.py $D/stdio.py
python3 - <<PY
import sys, time; sys.path.insert(0,'$D'); from stdio import *
s=Stdio(['/tmp/atk39b/mcpsandbox','serve','--policy','$D/pol.toml'], err='$D/serve.err')
for i in range(2):
    t=time.time(); r=text(s.call('write_file',{'path':'note%d.txt' % i,'content':'x'})).strip().replace("\n"," ")
    print("write_file note%d.txt: %.2fs %s" % (i, time.time()-t, r[:120]))
s.close()
PY
