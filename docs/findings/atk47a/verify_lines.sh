#!/bin/bash
# verify_lines.sh: run each config line with dash (sh) and bash from a project, CLAUDE_PROJECT_DIR set,
# as Claude Code (sh -c), husky v9 (sh -e FILE) and lefthook (sh -c) run them; server/main.py prints RAN.
set -u
p=$(mktemp -d); trap 'rm -rf "$p"' EXIT
mkdir -p "$p/server" "$p/scripts" "$p/my tools" "$p/app"
echo 'import helper; print("RAN server/main.py")' > "$p/server/main.py"
echo 'X = 1' > "$p/server/helper.py"
echo 'print("RAN scripts/fmt.py")' > "$p/scripts/fmt.py"
printf '#!/bin/sh\necho "RAN my tools/fmt.sh"\n' > "$p/my tools/fmt.sh"; chmod +x "$p/my tools/fmt.sh"
echo 'print("RAN app/main.py")' > "$p/app/main.py"
cd "$p"; export CLAUDE_PROJECT_DIR="$p"
run() { # label, code
  s=$(sh -c "$2" 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1); b=$(bash -c "$2" 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1)
  printf '%-62s sh: %-22s bash: %s\n' "$1" "${s:-(not run)}" "${b:-(not run)}"
}
runfile() { # label, text (a .husky script: sh -e FILE)
  printf '%s' "$2" > "$p/hook.sh"
  s=$(sh -e "$p/hook.sh" 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1); b=$(bash -e "$p/hook.sh" 2>&1 </dev/null | grep -o 'RAN [^"]*' | head -1)
  printf '%-62s sh -e: %-22s bash -e: %s\n' "$1" "${s:-(not run)}" "${b:-(not run)}"
}
echo "== F1: a ( glued to a word in a comment or heredoc body"
runfile "husky: # see lint-staged(1) / cd server && python3 main.py" $'# see lint-staged(1)\ncd server && python3 main.py\n'
runfile "husky: #!/bin/sh # format(py) … cd server / python3 main.py" $'#!/bin/sh\n# format(py) before commit\ncd server\npython3 main.py\n'
runfile "husky: cat <<EOF running format(s) EOF / cd server …" $'cat <<EOF\nrunning format(s)\nEOF\ncd server && python3 main.py\n'
run "hook: cd server && python3 main.py # fmt(py)" 'cd server && python3 main.py # fmt(py)'
run "hook: python3 scripts/fmt.py;true # see fmt(1)" 'python3 scripts/fmt.py;true # see fmt(1)'
run "hook: \"\$CLAUDE_PROJECT_DIR/my tools/fmt.sh\" # see fmt(1)" '"$CLAUDE_PROJECT_DIR/my tools/fmt.sh" # see fmt(1)'
run "mcp: sh -c 'cd server; python3 main.py # see fmt(1)'" 'sh -c "cd server; python3 main.py # see fmt(1)"'
echo "== control: a real syntax error (sh stops)"
runfile "husky: echo done(1) / python3 scripts/fmt.py" $'echo done(1)\npython3 scripts/fmt.py\n'
echo "== F4: assignments by export/readonly, cd's redirection before its operand"
run "hook: export SRV=server; cd \"\$SRV\" && python3 main.py" 'export SRV=server; cd "$SRV" && python3 main.py'
run "hook: readonly SRV=server; cd \$SRV && python3 main.py" 'readonly SRV=server; cd $SRV && python3 main.py'
run "hook: export SRV=\"\$CLAUDE_PROJECT_DIR/server\"; python3 \"\$SRV/main.py\"" 'export SRV="$CLAUDE_PROJECT_DIR/server"; python3 "$SRV/main.py"'
runfile "husky: export SRV=server / cd \"\$SRV\" / python3 main.py" $'export SRV=server\ncd "$SRV"\npython3 main.py\n'
run "hook: cd >/dev/null server && python3 main.py" 'cd >/dev/null server && python3 main.py'
run "hook: cd 2>/dev/null server && python3 main.py" 'cd 2>/dev/null server && python3 main.py'
echo "== F5: the shell's own \${V:-d} (V set by the line) rewritten to d"
run "hook: D=server; cd \${D:-x} && python3 main.py" 'D=server; cd ${D:-x} && python3 main.py'
runfile "husky: SRV=server / cd \"\${SRV:-.}\" && python3 main.py" $'SRV=server\ncd "${SRV:-.}" && python3 main.py\n'
runfile "husky: APP=server/main.py / python3 \"\${APP:-app/main.py}\"" $'APP=server/main.py\npython3 "${APP:-app/main.py}"\n'
run "hook: APP=server/main.py; python3 \"\${APP:-app/main.py}\"" 'APP=server/main.py; python3 "${APP:-app/main.py}"'
run "lefthook run: APP=server/main.py; python3 \${APP:-app/main.py}" 'APP=server/main.py; python3 ${APP:-app/main.py}'
