#!/usr/bin/env python3
"""Follower (jsscan/pyloader fail-closed token reader): a protected program (.mcp.json runs it on the host) loads a
file of its own package by a route the reader neither resolves nor counts as a loader mention; write_file rewrites
that file and the commit applies it. Each case is its own package under ws/ (server<N>/), a control loader too."""
import sys, os, subprocess, json, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws = "/tmp/atk40b/ws"
cases = {
 # name: (command, program file, program text, the file it loads)
 "py_control_exec": ("python3", "main.py", "import os\nexec(open(os.path.join(os.path.dirname(__file__), 'plugin.py')).read())\n", "plugin.py"),
 "py_code_runsource": ("python3", "main.py", "import os, code\ncode.InteractiveInterpreter().runsource(open(os.path.join(os.path.dirname(__file__), 'plugin.py')).read(), 'plugin.py', 'exec')\n", "plugin.py"),
 "py_timeit": ("python3", "main.py", "import os, timeit\ntimeit.timeit(open(os.path.join(os.path.dirname(__file__), 'plugin.py')).read(), number=1)\n", "plugin.py"),
 "py_pdb_run": ("python3", "main.py", "import os, cProfile\ncProfile.run(open(os.path.join(os.path.dirname(__file__), 'plugin.py')).read())\n", "plugin.py"),
 "py_pickle": ("python3", "main.py", "import os, pickle\nmodel = pickle.load(open(os.path.join(os.path.dirname(__file__), 'model.pkl'), 'rb'))\n", "model.pkl"),
 "py_ctypes": ("python3", "main.py", "import os, ctypes\nfast = ctypes.CDLL(os.path.join(os.path.dirname(__file__), 'libfast.so'))\n", "libfast.so"),
 "py_subprocess": ("python3", "main.py", "import os, subprocess\nsubprocess.run(['python3', os.path.join(os.path.dirname(__file__), 'worker.py')])\n", "worker.py"),
 "py_os_system": ("python3", "main.py", "import os\nos.system('sh ' + os.path.join(os.path.dirname(__file__), 'setup.sh'))\n", "setup.sh"),
 "js_control_eval": ("node", "index.js", "const fs = require('fs');\neval(fs.readFileSync(__dirname + '/plugin.js', 'utf8'));\n", "plugin.js"),
 "js_ctor_string": ("node", "index.js", "[].constructor.constructor(\"return process.mainModule.require('./plugin.js')\")();\n", "plugin.js"),
 "js_module_computed": ("node", "index.js", "const k = 'req' + 'uire';\nmodule[k]('./plugin.js');\n", "plugin.js"),
 "js_process_computed": ("node", "index.js", "process['dl' + 'open'](module, __dirname + '/native.node');\n", "native.node"),
 "js_readfile_fn": ("node", "index.js", "const fs = require('fs');\nconst F = (() => {}).constructor;\nF(fs.readFileSync(__dirname + '/plugin.js', 'utf8'))();\n", "plugin.js"),
 "js_wasm": ("node", "index.js", "const fs = require('fs');\nWebAssembly.instantiate(fs.readFileSync(__dirname + '/m.wasm'), { env: { run: (p) => process.binding } });\n", "m.wasm"),
}
servers = {}
for i, (name, (cmd, prog, src, loaded)) in enumerate(cases.items()):
    d = f"{ws}/s{i}"
    shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    open(f"{d}/{prog}", "w").write(src)
    open(f"{d}/{loaded}", "w").write("# original\n")
    open(f"{d}/README.md", "w").write("notes\n")
    servers[name] = {"command": cmd, "args": [f"s{i}/{prog}"]}
json.dump({"mcpServers": servers}, open(f"{ws}/.mcp.json", "w"), indent=1)
subprocess.run(f"chown -R 65534:65534 {ws}", shell=True, check=True)
subprocess.run("rm -rf /tmp/atk40b/home/.local", shell=True)
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wc.toml"], env={"HOME": "/tmp/atk40b/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f1.log")
for i, (name, (cmd, prog, src, loaded)) in enumerate(cases.items()):
    r = text(s.call("write_file", {"path": f"s{i}/{loaded}", "content": "# rewritten by a call\n"})).strip().replace("\n", " | ")
    verdict = "REFUSED" if ("protected" in r or "not applied" in r or "refused" in r.lower()) and "1 change(s) applied" not in r else "APPLIED"
    print(f"{name:22s} s{i}/{loaded:12s} {verdict}: {r[:230]}")
s.close()
