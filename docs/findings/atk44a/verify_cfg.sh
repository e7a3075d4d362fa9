#!/bin/bash
# Decode each YAML config with PyYAML and with the npm `yaml` package (Continue's parser), and run
# what python3 gets; run the Python import spellings with the real python3.
set -u
YAMLJS=${YAMLJS:-/tmp/ci-43b/e2e/node/node_modules/yaml}   # a copy of npm yaml found on this machine (read only)
mkdir -p /tmp/atk44a; T=$(mktemp -d /tmp/atk44a/c.XXXX); cd "$T"; mkdir -p srv; : > srv/__init__.py; echo "print('RAN srv.main')" > srv/main.py
cat > dec.py <<'PY'
import yaml, subprocess, sys
try:
    s = yaml.safe_load(open('s.yaml'))['mcpServers'][0]
except Exception as e:
    print('PyYAML error: ' + str(e).splitlines()[-1].strip()); sys.exit()
r = subprocess.run([s['command']] + s['args'], capture_output=True, text=True)
print('PyYAML %s -> %s' % (s['args'], r.stdout.strip()))
PY
y() { # $1 name, $2 yaml text
  printf '%s' "$2" > s.yaml
  py=$(python3 dec.py 2>&1)
  js=$(node -e "const Y=require('$YAMLJS'); const d=Y.parse(require('fs').readFileSync('s.yaml','utf8')); const a=d.mcpServers[0].args; console.log(JSON.stringify(a), '->', require('child_process').spawnSync(d.mcpServers[0].command, a).stdout.toString().trim())" 2>&1 | tail -1)
  printf '%-34s %s | yaml(npm): %s\n' "$1" "$py" "$js"; }
H='name: s
version: 0.0.1
schema: v1
'
y '- &-c import srv.main' "${H}mcpServers:
  - name: s
    command: python3
    args:
      - -c
      - &-c import srv.main
"
y '- &.c import srv.main' "${H}mcpServers:
  - name: s
    command: python3
    args:
      - -c
      - &.c import srv.main
"
y 'alias *-c' "${H}x-code: &-c \"import srv.main\"
mcpServers:
  - name: s
    command: python3
    args: [-c, *-c]
"
y "flow line it's … x'y hides &c" "${H}mcpServers:
  - {name: it's, command: python3, args: [-c, &c import srv.main], note: x'y}
"
y 'dquoted x = 1 / (empty) / import' "${H}mcpServers:
  - name: s
    command: python3
    args:
      - -c
      - \"x = 1

        import srv.main\"
"
y 'args: [-X, //, -c, import srv.main]' "${H}mcpServers:
  - name: s
    command: python3
    args: [-X, //, -c, import srv.main]
"
echo "--- python3 import spellings"
printf '%-40s -> %s\n' "import os, \\<newline> srv.main" "$(python3 -c $'import os, \\\n  srv.main' 2>&1)"
mkdir -p scripts; echo "print('RAN scripts/fmt.py')" > scripts/fmt.py
printf '%-40s -> %s\n' 'hook: python3 "${CLAUDE_PROJECT_DIR:-/opt/proj}/scripts/fmt.py" (Claude Code sets CLAUDE_PROJECT_DIR)' "$(CLAUDE_PROJECT_DIR=$PWD sh -c 'cd /; python3 "${CLAUDE_PROJECT_DIR:-/opt/proj}/scripts/fmt.py"' 2>&1)"
printf '%-40s -> %s\n' 'python3 -m timeit -n 1 "import srv.main"' "$(python3 -m timeit -n 1 -r 1 'import srv.main' 2>&1 | head -1)"
cd /; rm -rf "$T"
echo "--- YAML flow sequences of plain scalars (Continue's parser npm yaml; PyYAML): what runs"
T=$(mktemp -d /tmp/atk44a/f.XXXX); cd "$T"; mkdir -p srv; : > srv/__init__.py; echo "print('RAN srv/main.py')" > srv/main.py; echo "console.log('RAN srv/main.js')" > srv/main.js
for a in 'python3|[srv/main.py]' 'python3|[srv/main.py, --port, 8080]' 'python3|[-m, srv.main]'; do
  printf 'name: s\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: s\n    command: %s\n    args: %s\n' "${a%%|*}" "${a#*|}" > s.yaml
  printf '%-44s %s\n' "command: ${a%%|*}, args: ${a#*|}" "$(node -e "const Y=require('$YAMLJS'); const s=Y.parse(require('fs').readFileSync('s.yaml','utf8')).mcpServers[0]; console.log(JSON.stringify(s.args), '->', require('child_process').spawnSync(s.command, s.args).stdout.toString().trim())")"
done
printf 'name: s\nversion: 0.0.1\nschema: v1\nmcpServers: [{name: s, command: node, args: [srv/main.js]}]\n' > s.yaml
printf '%-44s %s\n' "mcpServers: [{… command: node, args: [srv/main.js]}]" "$(node -e "const Y=require('$YAMLJS'); const s=Y.parse(require('fs').readFileSync('s.yaml','utf8')).mcpServers[0]; console.log(JSON.stringify(s.args), '->', require('child_process').spawnSync(s.command, s.args).stdout.toString().trim())")"
printf "'*.py': [python3 srv/main.py]\n" > l.yaml
printf '%-44s %s\n' ".lintstagedrc.yaml '*.py': [python3 srv/main.py]" "$(python3 -c "import yaml; print(yaml.safe_load(open('l.yaml')))")"
cd /; rm -rf "$T"
