#!/bin/bash
# python3/node run srv/main.py / srv/index.js whose BASE is joined from literals; they load plugins/p.* a directory up
d=$(mktemp -d); cd "$d"; mkdir -p srv plugins
echo 'print("RAN plugins/p.py")' > plugins/p.py; echo 'console.log("RAN plugins/p.js")' > plugins/p.js
for part in "''.join(['.', '.'])" "''.join(('.', '.'))"; do
  cat > srv/main.py <<PY
import importlib.util, os
from pathlib import Path
BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), $part)
s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'plugins', 'p.py'))
m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
PY
  printf '%-40s %s\n' "py $part" "$(python3 srv/main.py 2>&1)"
done
for part in "['.', '.'].join('')" "['', '', ''].join('.')"; do
  printf "const path = require('path');\nconst name = ['p'][0];\nconst BASE = path.join(__dirname, %s);\nrequire(path.join(BASE, 'plugins', name));\n" "$part" > srv/index.js
  printf '%-40s %s\n' "js $part" "$(node srv/index.js 2>&1)"
done
rm -rf "$d"
