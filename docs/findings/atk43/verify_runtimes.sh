#!/bin/bash
# verifies with the real runtimes (python3 3.11, node 20, PyYAML 6, bash) that each spelling runs the module
set -u
D=/tmp/atk43/rt; mkdir -p $D/srv $D/app; cd $D
echo 'print("RAN srv.main")' > srv/main.py; : > srv/__init__.py
echo 'print("RAN app.main")' > app/main.py; : > app/__init__.py
echo 'console.log("RAN app/main.js")' > app/main.js
y() { python3 -c 'import sys,yaml; a=yaml.safe_load(sys.stdin.read())["mcpServers"][0]["args"]; print("  yaml args:", a); import subprocess; subprocess.run(["python3"]+a)'; }
echo "== YAML plain scalar over two lines"; printf 'mcpServers:\n  - args:\n      - -c\n      - import os;\n        import srv.main\n' | y
echo "== YAML !!str";  printf 'mcpServers:\n  - args:\n      - -c\n      - !!str import srv.main\n' | y
echo "== YAML &c";     printf 'mcpServers:\n  - args:\n      - -c\n      - &c import srv.main\n' | y
echo "== YAML *c";     printf 'x-code: &c "import srv.main"\nmcpServers:\n  - args: [-c, *c]\n' | y
echo "== YAML escaped line break"; printf 'mcpServers:\n  - args:\n      - -c\n      - "import s\\\n        rv.main"\n' | y
echo "== JSONC block comment (node strips comments as VS Code's jsonc parser does)"
node -e 'const t=`{"servers": {"s": {"command": "python3", "args": ["-c", /* "print(1)", */ "import srv.main"]}}}`; const a=JSON.parse(t.replace(/\/\*[\s\S]*?\*\//g,"")).servers.s.args; console.log("  args:", a); require("child_process").spawnSync("python3",a,{stdio:"inherit"})'
echo "== python3 -c 'if 1: import srv.main'"; python3 -c 'if 1: import srv.main'
echo "== python3 /dev/stdin heredoc"; python3 /dev/stdin <<'X'
import app.main
X
echo "== node /dev/stdin heredoc"; node /dev/stdin <<'X'
require('./app/main.js')
X
echo "== bash -s heredoc"; bash -s <<'X'
python3 -c 'import app.main'
X
echo "== timeout 30 python3 -c"; timeout 30 python3 -c 'import app.main'
echo "== bash -O extglob -c"; bash -O extglob -c "python3 -c 'import app.main'"
echo "== bash --rcfile /dev/null -c"; bash --rcfile /dev/null -c "python3 -c 'import app.main'"
echo "== node --disable-warning X -e"; node --disable-warning ExperimentalWarning -e "require('./app/main.js')"
echo "== node --unhandled-rejections strict -e"; node --unhandled-rejections strict -e "require('./app/main.js')"
echo '== N=$((1<<2)); exec python3 app/main.py'; bash -c 'N=$((1<<2)); echo N=$N; python3 app/main.py'
