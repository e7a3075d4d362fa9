#!/bin/bash
# verify.sh: run each APPLIED shell form with dash and bash from a workspace like the tests' (with .git)
ws=/tmp/atk49a/vws; rm -rf $ws; mkdir -p $ws/server $ws/hooks.d; cd $ws; git init -q .
printf 'print("RAN server/main.py")\n' > server/main.py; printf 'X=1\n' > server/helper.py
printf 'echo RAN hooks.d/a.sh\n' > hooks.d/a.sh; printf 'echo RAN hooks.d/b.sh \(new\)\n' > hooks.d/b.sh
export CLAUDE_PROJECT_DIR=$ws
while IFS= read -r form; do
  for sh in dash bash; do printf '%-5s %-75s -> ' $sh "$form"; (cd $ws && $sh -c "$form" 2>&1 | tr '\n' ' '); echo; done
done <<'FORMS'
for f in server/*.py; do python3 "$f"; done
for d in serv*/; do (cd "$d" && python3 main.py); done
for f in hooks.d/*; do sh "$f"; done
python3 "$(ls server/m*.py)"
F=$(ls server/m*.py); python3 "$F"
sh "$(ls hooks.d/*.sh | head -1)"
cd "$(git rev-parse --show-toplevel)"/serv? && python3 main.py
FORMS
printf '%-5s %-75s -> ' bash 'bash -O globstar -c python3 server/**/main.py'; bash -O globstar -c 'python3 server/**/main.py'
printf '%-5s %-75s -> ' bash 'shopt -s extglob; python3 server/@(main).py'; bash -c $'shopt -s extglob\npython3 server/@(main).py'
# started script's nested code with positional parameters; export $(cat .env) then a default
printf 'SRV=server\n' > $ws/.env
printf '%s\n' "sh -c 'cd \"\$1\" && python3 main.py' _ server" > $ws/run1.sh
printf '%s\n' "bash -c 'cd \"\$0\" && python3 main.py' server" > $ws/run2.sh
for sh in dash bash; do printf '%-5s %-75s -> ' $sh "run1.sh: sh -c 'cd \"\$1\" && python3 main.py' _ server"; (cd $ws && $sh run1.sh); done
for sh in dash bash; do printf '%-5s %-75s -> ' $sh "run2.sh: bash -c 'cd \"\$0\" && python3 main.py' server"; (cd $ws && $sh run2.sh); done
for sh in dash bash; do printf '%-5s %-75s -> ' $sh 'export $(cat .env); cd "${SRV:-app}" && python3 main.py'; (cd $ws && $sh -c 'export $(cat .env); cd "${SRV:-app}" && python3 main.py'); done
for sh in dash bash; do printf '%-5s %-75s -> ' $sh ': "${SRV:=server}"; export SRV; sh -c ...'; (cd $ws && env -u SRV $sh -c ': "${SRV:=server}"; export SRV; sh -c '"'"'cd "$SRV" && python3 main.py'"'"); done
