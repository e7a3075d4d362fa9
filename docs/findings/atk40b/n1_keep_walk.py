#!/usr/bin/env python3
"""keep store: a refused directory of sparse files each past KeepCallBytes is walked whole (each file is 'skipped',
never counted toward KeepCallFiles), so the bound 'a directory past the bound is not walked' never triggers."""
import sys, os, time, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
for n, kind in [(int(a.split(":")[0]), a.split(":")[1]) for a in sys.argv[1:]]:
    subprocess.run("rm -rf /tmp/atk40b/ws/.vscode /tmp/atk40b/home/.local/state", shell=True)
    s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/py.toml"], env={"HOME": "/tmp/atk40b/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/serve.log")
    t = time.time()
    r = s.call("run_allowed_command", {"command": "python3", "args": ["-c", open(os.path.dirname(os.path.abspath(__file__)) + "/n1_keep_walk_inside.py").read(), str(n), kind]})
    print(f"n={n} {kind}: call took {time.time()-t:.2f}s:", text(r).strip().replace("\n", " | ")[-600:])
    s.close()
