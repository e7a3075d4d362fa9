#!/bin/bash
# Each APPLIED form of TestAtk45aStdinForms run by bash: does python3 run app.main?
d=$(mktemp -d /tmp/atk45a/vs.XXXX)
mkdir -p $d/app $d/tools $d/scripts
echo 'print("RAN app.main")' > $d/app/main.py; : > $d/app/__init__.py
echo 'import app.main' > $d/tools/boot.txt; cp $d/tools/boot.txt $d/tools/boot.py
while IFS= read -r body; do
  printf '#!/bin/bash\ncd "$(dirname "$0")/.."\n%b\n' "$body" > $d/scripts/run.sh
  printf '%-62s -> %s\n' "$body" "$(cd /; timeout 5 bash $d/scripts/run.sh 2>&1 | tr '\n' ' ')"
done <<'FORMS'
exec python3 - < tools/boot.txt
exec python3 - < tools/boot.py
exec python3 - <<< "$(cat tools/boot.txt)"
CODE=$(<tools/boot.txt)\nexec python3 - <<< "$CODE"
exec python3 - <<EOF\n$(cat tools/boot.txt)\nEOF
CODE=$(cat tools/boot.txt)\nexec python3 - <<EOF\n$CODE\nEOF
PY=$(command -v python3)\ncat tools/boot.txt | "$PY" -
coproc PY { python3 -; }\ncat tools/boot.txt >&"${PY[1]}"\nexec {PY[1]}>&-\nwait
exec node - < tools/boot.js
FORMS
echo "require('./app/main.js')" > $d/tools/boot.js; echo 'console.log("RAN app/main.js")' > $d/app/main.js
printf '#!/bin/bash\ncd "$(dirname "$0")/.."\nexec node - < tools/boot.js\n' > $d/scripts/run.sh
printf '%-62s -> %s\n' "exec node - < tools/boot.js" "$(cd /; bash $d/scripts/run.sh 2>&1)"
rm -rf $d
