#!/bin/bash
# the .kiro.hook's command as a JSON parser gives it (node's JSON.parse), then run by sh -c from the project
d=$(mktemp -d); cd "$d"; mkdir -p app lib scripts .kiro/hooks
echo 'print("RAN app.main")' > app/main.py; : > app/__init__.py; echo 'print("RAN lib.main")' > lib/main.py; : > lib/__init__.py
printf '#!/bin/bash\ncd "$(dirname "$0")/.."\nexec python3 -m "${APP_MODULE:-app.main}"\n' > scripts/run.sh
for cmd in 'APP_MODULE=lib.main bash scripts/run.sh' 'APP\u005fMODULE=lib.main bash scripts/run.sh' 'env \u0041PP_MODULE=lib.main bash scripts/run.sh'; do
  printf '{"enabled":true,"name":"fmt","version":"1","when":{"type":"fileEdited","patterns":["**/*.py"]},"then":{"type":"runCommand","command":"%s"}}' "$cmd" > .kiro/hooks/fmt.kiro.hook
  c=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(".kiro/hooks/fmt.kiro.hook","utf8")).then.command)')
  printf '%-52s JSON.parse: %-42s sh: %s\n' "$cmd" "$c" "$(env -u APP_MODULE sh -c "$c" 2>&1)"
done
rm -rf "$d"
