#!/bin/bash
# TestAtk45aSetterAllexport's outer.sh forms run by bash: which main.py does inner.sh run?
d=$(mktemp -d /tmp/atk45a/va.XXXX); mkdir -p $d/app $d/lib $d/scripts
for p in app lib; do echo "print('RAN $p/main.py')" > $d/$p/main.py; done
echo lib > $d/.app_dir
printf '#!/bin/bash\ncd "$(dirname "$0")/.."\nexec python3 "${APP_DIR:-app}/main.py"\n' > $d/scripts/inner.sh
while IFS= read -r body; do
  printf '#!/bin/bash\ncd "$(dirname "$0")/.."\n%b\nexec bash scripts/inner.sh\n' "$body" > $d/scripts/outer.sh
  printf '%-70s -> %s\n' "$body" "$(cd /; env -u APP_DIR bash $d/scripts/outer.sh 2>&1 | head -1)"
done <<'FORMS'
set -a\nread -r APP_DIR < .app_dir
set -a\nprintf -v APP_DIR '%s' lib
set -o allexport\nfor APP_DIR in lib; do bash scripts/inner.sh; done
FORMS
rm -rf $d
