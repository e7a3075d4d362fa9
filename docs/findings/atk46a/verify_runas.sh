#!/bin/bash
# the runtimes run tools/serve (no extension), which imports app.main, for each option form
d=$(mktemp -d); cd "$d"; mkdir -p app tools
echo 'print("RAN app.main")' > app/main.py; : > app/__init__.py
echo 'import sys; sys.path.insert(0, "."); import app.main' > tools/serve.py; cp tools/serve.py tools/serve
rm tools/serve.py
echo 'console.log("RAN app/main.js")' > app/main.js
python3 --version; node --version
for a in "-u tools/serve" "-uW ignore tools/serve" "-BX dev tools/serve"; do echo "python3 $a: $(python3 $a 2>&1)"; done
echo 'require("../app/main.js")' > tools/serve
for a in "tools/serve" "--disable-warning ExperimentalWarning tools/serve" "--unhandled-rejections strict tools/serve" "--watch-path tools tools/serve" "--env-file-if-exists .env tools/serve" "--stack-trace-limit 50 tools/serve"; do
  case $a in --watch-path*) out=$(timeout 2 node $a 2>&1 | head -3);; *) out=$(node $a 2>&1 | head -3);; esac
  echo "node $a: $out"
done
rm -rf "$d"
