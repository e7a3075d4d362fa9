#!/usr/bin/env python3
"""rcloads (mise): a trusted mise.toml's [env] loader variables (NODE_OPTIONS, LD_PRELOAD, PYTHONSTARTUP with
{{config_root}}), its [hooks] (enter/cd: shell run by `mise activate` on cd) and [tasks] run files: which are
followed? write_file only (wc.toml). Control: _.source (followed since atk40 F11)."""
import sys, os, subprocess, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws, home = "/tmp/atk40b/ws", "/tmp/atk40b/home"
for e in os.listdir(ws):
    p = f"{ws}/{e}"; shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
shutil.rmtree(home, ignore_errors=True); os.makedirs(home)
mise = '''[env]
_.source = "scripts/env.sh"
NODE_OPTIONS = "--require ./hooks/preload.cjs"
LD_PRELOAD = "{{config_root}}/lib/libfast.so"
PYTHONSTARTUP = "{{config_root}}/tools/startup.py"

[hooks]
enter = "bash tools/on-enter"

[tasks.build]
run = "node tools/build.mjs"
'''
open(f"{ws}/mise.toml", "w").write(mise)
subprocess.run(f"chown -R 65534:65534 {ws}", shell=True, check=True)
print("mise.toml:", mise.replace("\n", " | "))
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wc.toml"], env={"HOME": home, "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f3b.log")
for p in ["scripts/env.sh", "hooks/preload.cjs", "lib/libfast.so", "tools/startup.py", "tools/on-enter", "tools/build.mjs"]:
    r = text(s.call("write_file", {"path": p, "content": "x\n"})).strip().replace("\n", " | ")
    print(("APPLIED" if " change(s) applied" in r and "0 change(s) applied" not in r else "REFUSED") + f": {p}: {r[-100:]}")
s.close()
