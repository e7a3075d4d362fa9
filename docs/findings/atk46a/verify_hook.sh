#!/bin/bash
# each hook command as sh -c (dash) and bash -c run it: from the project, CLAUDE_PROJECT_DIR set
d=$(mktemp -d); cd "$d"; mkdir -p scripts "my tools" docs
echo 'echo RAN scripts/fmt.sh' > scripts/fmt.sh; chmod +x scripts/fmt.sh
echo 'print("RAN scripts/fmt.py")' > scripts/fmt.py
echo 'print("RAN my tools/fmt.py")' > "my tools/fmt.py"
printf 'echo RAN my tools/fmt.sh\n' > "my tools/fmt.sh"; chmod +x "my tools/fmt.sh"
echo a > docs/a.md
export CLAUDE_PROJECT_DIR=$d
ls -l /bin/sh | sed 's/.*-> //'
while IFS= read -r c; do
  printf '%-48s sh: %-22s bash: %s\n' "$c" "$(sh -c "$c" 2>&1 | head -1)" "$(bash -c "$c" 2>&1 | head -1)"
done <<'LIST'
"${CLAUDE_PROJECT_DIR%/}"/scripts/fmt.sh
"${CLAUDE_PROJECT_DIR:?}"/scripts/fmt.sh
"$(pwd)"/scripts/fmt.sh
`pwd`/scripts/fmt.sh
cd scripts && python3 fmt.py
sh -c 'cd scripts; python3 fmt.py'
"$CLAUDE_PROJECT_DIR/my tools/fmt.sh"
python3 "my tools/fmt.py"
python3 my\ tools/fmt.py
python3 $'scripts/fmt.py'
python3 scripts/fmt.py<docs/a.md
python3 scripts/fmt.py>/dev/stderr
python3 scripts/fmt.py;true
python3 scripts/fmt.py&&true
python3 {scripts,x}/fmt.py
python3 scrip?s/fmt.py
python3 scripts/fmt.p[y]
python3 ~+/scripts/fmt.py
LIST
rm -rf "$d"
