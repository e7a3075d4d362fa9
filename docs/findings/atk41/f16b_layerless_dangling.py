#!/usr/bin/env python3
"""atk41 F16b: a dangling home link into the workspace (~/.profile -> ws/profile, not there yet): homelinks protects
the first missing name; with and without a layer, a call that creates ws/profile. Run setup.sh first (it is re-run)."""
import os, sys, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
home = "/tmp/atk41/ll/home"
inside = "open('profile', 'w').write('id > /tmp/atk41/ll/PWNED\\n')\nprint('made profile')\n"
for label, mut in (("control, with the layer", ""), ("layer-less", "workspace-layer")):
    subprocess.run(["sh", os.path.dirname(os.path.abspath(__file__)) + "/setup.sh"], check=True)
    os.symlink("/tmp/atk41/ll/ws/profile", home + "/.profile")
    env = {"HOME": home, "PATH": "/usr/bin:/bin"}
    if mut: env["MCPSANDBOX_MUTANT"] = mut
    s = Stdio(["/tmp/atk41/mcpsandbox-mutant", "serve", "--policy", "/tmp/atk41/ll/py.toml"], env=env, err="/tmp/atk41/ll/serve.log")
    print("==", label)
    print(text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", inside]})).strip()[:500])
    s.close()
    p = home + "/.profile"
    print("~/.profile reads:", repr(open(p).read()) if os.path.exists(p) else "(dangling)")
