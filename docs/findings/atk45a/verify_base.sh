#!/bin/bash
# TestAtk45aBasePlace's APPLIED forms run by python3 and node: do they load plugins/p.* (a directory up)?
d=$(mktemp -d /tmp/atk45a/vb.XXXX); mkdir -p $d/plugins $d/srv; cd $d
echo 'print("RAN plugins/p.py")' > plugins/p.py; echo 'console.log("RAN plugins/p.js")' > plugins/p.js
pre='import importlib.util, os
from pathlib import Path
'
load="s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'plugins', 'p.py'))
m = importlib.util.module_from_spec(s); s.loader.exec_module(m)"
H='os.path.dirname(os.path.abspath(__file__))'
for v in "os.path.join($H, '.' + '.')" "os.path.join($H, '%s%s' % ('.', '.'))" "os.path.join($H, f\"{'.'}{'.'}\")" "os.path.join($H, '.' * 2)"; do
  printf '%sBASE = %s\n%s\n' "$pre" "$v" "$load" > srv/main.py
  printf 'python3: BASE = %-64s -> %s\n' "$v" "$(cd /; python3 $d/srv/main.py 2>&1)"
done
for v in "path.join(__dirname, '.' + '.')" 'path.join(__dirname, `${'"'.'"'}.`)'; do
  printf "const path = require('path');\nconst name = ['p'][0];\nconst BASE = %s;\nrequire(path.join(BASE, 'plugins', name));\n" "$v" > srv/index.js
  printf 'node:    BASE = %-64s -> %s\n' "$v" "$(cd /; node $d/srv/index.js 2>&1)"
done
cd /; rm -rf $d
