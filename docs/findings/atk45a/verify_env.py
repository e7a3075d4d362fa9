#!/usr/bin/env python3
"""F1: each config's env as its format's parser gives it (json, PyYAML, npm yaml, tomllib), then bash scripts/run.sh
(cd root; exec python3 "${APP_DIR:-app}/main.py") run with it: which main.py runs."""
import json, os, subprocess, tempfile, tomllib, yaml
d = tempfile.mkdtemp(dir="/tmp/atk45a")
for p in ("app", "lib", "scripts"):
    os.makedirs(os.path.join(d, p))
for p in ("app", "lib"):
    open(os.path.join(d, p, "main.py"), "w").write(f'print("RAN {p}/main.py")\n')
open(os.path.join(d, "scripts/run.sh"), "w").write('#!/bin/bash\ncd "$(dirname "$0")/.."\nexec python3 "${APP_DIR:-app}/main.py"\n')
V = "/proc/self/cwd/lib"
def npmyaml(text):
    js = "const Y=require('/tmp/ci-44b/e2e/node/node_modules/yaml');let s='';process.stdin.on('data',c=>s+=c).on('end',()=>console.log(JSON.stringify(Y.parse(s))))"
    return json.loads(subprocess.run(["node", "-e", js], input=text, capture_output=True, text=True).stdout)
cases = [
    ("json", '{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"],"env":{"APP\\u005fDIR":"%s"}}}}' % V),
    ("json", '{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"],"env":{"APP_DIR"\n:"%s"}}}}' % V),
    ("json", '{"mcpServers":{"s":{"command":"bash","args":["scripts/run.sh"],"env":{"\\u0041PP_DIR":"%s"}}}}' % V),
    ("yaml", 'mcpServers:\n  - name: s\n    command: bash\n    args:\n      - scripts/run.sh\n    env:\n      "APP\\x5fDIR": %s\n' % V),
    ("yaml", 'mcpServers:\n  - name: s\n    command: bash\n    args:\n      - scripts/run.sh\n    env:\n      ? APP_DIR\n      : %s\n' % V),
    ("toml", '[mcp_servers.s]\ncommand = "bash"\nargs = ["scripts/run.sh"]\nenv = { "APP\\u005FDIR" = "%s" }\n' % V),
]
for kind, text in cases:
    parsed = [json.loads(text)] if kind == "json" else [yaml.safe_load(text), npmyaml(text)] if kind == "yaml" else [tomllib.loads(text)]
    for doc in parsed:
        s = doc.get("mcpServers") or doc.get("mcp_servers")
        s = s[0] if isinstance(s, list) else s["s"]
        env = dict(os.environ, **s["env"])
        out = subprocess.run(["bash", os.path.join(d, s["args"][0])], env=env, capture_output=True, text=True, cwd="/").stdout.strip()
        print(f"{kind:4} {text.split('env')[-1].strip()[:48]!r:52} env={s['env']} -> {out}")
subprocess.run(["rm", "-rf", d])
