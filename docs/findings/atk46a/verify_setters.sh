#!/bin/bash
# bash runs outer.sh (each form, exactly as the Go test writes it), which starts inner.sh:
# exec python3 "${APP_DIR:-app}/main.py"; APP_DIR unset in the environment
d=$(mktemp -d); cd "$d"; mkdir -p app lib scripts
echo 'print("RAN app/main.py")' > app/main.py; echo 'print("RAN lib/main.py")' > lib/main.py; echo lib > .app_dir
printf '#!/bin/bash\ncd "$(dirname "$0")/.."\nexec python3 "${APP_DIR:-app}/main.py"\n' > scripts/inner.sh
bash --version | head -1
run() { { printf '#!/bin/bash\ncd "$(dirname "$0")/.."\n'; cat; printf 'exec bash scripts/inner.sh\n'; } > scripts/outer.sh
  printf '%-58s %s\n' "$1" "$(env -u APP_DIR bash scripts/outer.sh 2>&1 | tr '\n' ' ')"; }
run 'control: read only' <<'B'
read -r APP_DIR < .app_dir
B
run 'read; \export APP_DIR' <<'B'
read -r APP_DIR < .app_dir
\export APP_DIR
B
run 'read; export "APP_DIR"' <<'B'
read -r APP_DIR < .app_dir
export "APP_DIR"
B
run 'set -"a"; read' <<'B'
set -"a"
read -r APP_DIR < .app_dir
B
run 'export APP_DI"R"=$(cat .app_dir)' <<'B'
export APP_DI"R"=$(cat .app_dir)
B
run 'export AP\P_DIR=$(cat .app_dir)' <<'B'
export AP\P_DIR=$(cat .app_dir)
B
run 'exec env APP_DI\R="$(cat .app_dir)" bash …' <<'B'
APP_D''IR=x; exec env APP_DI\R="$(cat .app_dir)" bash scripts/inner.sh
B
rm -rf "$d"
