#!/bin/bash
# Run each APPLIED shell form with the real bash (and python3): which main.py runs.
set -u
mkdir -p /tmp/atk44a; T=$(mktemp -d /tmp/atk44a/v.XXXX); cd "$T"
mk() { rm -rf ws; mkdir -p ws/scripts ws/app ws/lib; cd ws; echo "print('RAN app/main.py')" > app/main.py; : > app/__init__.py
       echo "print('RAN lib/main.py')" > lib/main.py; printf 'APP_DIR=lib\n' > .env; }
run() { # $1 name, $2 run.sh body
  mk; printf '#!/bin/bash\nset -euo pipefail\ncd "$(dirname "$0")/.."\n%s\n' "$2" > scripts/run.sh
  printf '#!/bin/bash\ncd "$(dirname "$0")/.."\nexec python3 "${APP_DIR:-app}/main.py"\n' > scripts/inner.sh
  printf '%-62s -> %s\n' "$1" "$(env -u APP_DIR bash scripts/run.sh 2>&1 | tr '\n' ' ')"; cd ..; }
D='exec python3 "${APP_DIR:-app}/main.py"'
run "export \$(grep -v '^#' .env | xargs)" "export \$(grep -v '^#' .env | xargs)
$D"
run 'export $(cat .env)' 'export $(cat .env)
'"$D"
run 'while IFS== read -r k v; do export "$k=$v"; done < .env' 'while IFS="=" read -r k v; do export "$k=$v"; done < .env
'"$D"
run 'while read -r line; do export "$line"; done < .env' 'while read -r line; do export "$line"; done < .env
'"$D"
run 'declare -x $(cat .env)' 'declare -x $(cat .env)
'"$D"
run 'readonly "$(cat .env)"' 'readonly "$(cat .env)"
'"$D"
run 'outer: export APP_DIR=lib; exec bash scripts/inner.sh' 'export APP_DIR=lib
exec bash scripts/inner.sh'
run 'outer: APP_DIR=lib exec bash scripts/inner.sh' 'APP_DIR=lib exec bash scripts/inner.sh'
run 'outer: set -a; . ./.env; set +a; exec bash scripts/inner.sh' 'set -a; . ./.env; set +a
exec bash scripts/inner.sh'
mk; printf '#!/bin/bash\ncd "$(dirname "$0")/.."\n%s\n' "$D" > scripts/run.sh
printf '%-62s -> %s\n' '.mcp.json: env APP_DIR=lib bash scripts/run.sh' "$(env -u APP_DIR env APP_DIR=lib bash scripts/run.sh 2>&1)"
printf '%-62s -> %s\n' 'hook: cd "$CLAUDE_PROJECT_DIR"&&APP_DIR=lib bash scripts/run.sh' "$(env -u APP_DIR CLAUDE_PROJECT_DIR=$PWD bash -c 'cd "$CLAUDE_PROJECT_DIR"&&APP_DIR=lib bash scripts/run.sh' 2>&1)"
printf 'export APP_DIR=lib\n' > .envrc
printf '%-62s -> %s\n' '.envrc export APP_DIR=lib (direnv: the client inherits it)' "$(env -u APP_DIR bash -c 'source .envrc; exec bash scripts/run.sh' 2>&1)"
cd ..
echo "--- arithmetic"
run 'N=$((\n 1<<2\n)); python3 -c import app.main' 'N=$((
  1<<2
))
echo "N=$N"
exec python3 -c "import app.main"'
run 'N=$[1<<2]; python3 -c import app.main' 'N=$[1<<2]
echo "N=$N"
exec python3 -c "import app.main"'
rm -rf "$T"
