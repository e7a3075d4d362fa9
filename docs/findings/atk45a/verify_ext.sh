#!/bin/bash
# TestAtk45aProgramByExt's APPLIED forms run by the real runtimes (from the workspace's root)
d=$(mktemp -d /tmp/atk45a/ve.XXXX); cd $d; mkdir -p app tools
echo 'print("RAN app/main.py")' > app/main.py; : > app/__init__.py
echo 'console.log("RAN app/main.js")' > app/main.js
py="import sys; sys.path.insert(0, '.'); import app.main"
echo "$py" > tools/serve.pyprog; echo "import app.main" > tools/boot.txt
for f in "python3 - < tools/boot.txt" "python3 tools/boot.txt.py" "python3 tools/serve"; do :; done
cp tools/serve.pyprog tools/serve; echo "$py" > tools/boot2.txt
echo "python3 - < tools/boot.txt      -> $(bash -c 'python3 - < tools/boot.txt' 2>&1)"
echo "python3 tools/boot2.txt         -> $(python3 tools/boot2.txt 2>&1)"
echo "python3 tools/serve (no ext)    -> $(python3 tools/serve 2>&1)"
echo "require('../app/main.js')" > tools/serve; echo "require('../app/main.js')" > tools/boot.txt
echo "node tools/serve (no ext)       -> $(node tools/serve 2>&1 | head -3)"
echo "node tools/boot.txt             -> $(node tools/boot.txt 2>&1 | head -3)"
cd /; rm -rf $d
