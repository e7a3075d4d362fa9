#!/bin/bash
# verify_reader.sh: a husky script run as husky v9 runs it (sh -e .husky/NAME from the project's
# root, as git runs the hook), a hook line as Claude Code runs it (sh -c); server/main.py prints RAN.
set -u
p=$(mktemp -d); trap 'rm -rf "$p"' EXIT
mkdir -p "$p/server" "$p/.husky"
echo 'import helper; print("RAN server/main.py")' > "$p/server/main.py"; echo 'X = 1' > "$p/server/helper.py"
cd "$p"; export CLAUDE_PROJECT_DIR="$p"
husky() { printf '%s' "$2" > .husky/hook
  s=$(sh -e .husky/hook 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1); b=$(bash -e .husky/hook 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1)
  printf '%-62s sh -e: %-20s bash -e: %s\n' "$1" "${s:-(not run)}" "${b:-(not run)}"; }
hook() { s=$(sh -c "$2" 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1); b=$(bash -c "$2" 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1)
  printf '%-62s sh: %-23s bash: %s\n' "$1" "${s:-(not run)}" "${b:-(not run)}"; }
husky "husky: heredoc body doesn't / cd server && python3 main.py" $'cat <<EOF\nThe message doesn\'t follow Conventional Commits\nEOF\ncd server && python3 main.py\n'
hook "hook: cat <<EOF … don't … EOF; cd server && python3 main.py" $'cat <<EOF\ndon\'t forget\nEOF\ncd server && python3 main.py'
husky "husky: cd \"\$(dirname \"\$0\")/../server\" && python3 main.py" $'cd "$(dirname "$0")/../server" && python3 main.py\n'
husky "husky: python3 \"\$(dirname \"\$0\")/../server/main.py\"" $'python3 "$(dirname "$0")/../server/main.py"\n'
command -v flock >/dev/null && hook "hook: flock /tmp/fmt.lock -c 'cd server && python3 main.py'" "flock $p/fmt.lock -c 'cd server && python3 main.py'"
