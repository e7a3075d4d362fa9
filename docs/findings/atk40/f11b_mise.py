#!/usr/bin/env python3
"""F11b: the same for a mise config (mise.toml, trusted): `_.file` and `_.source` naming files that are not there
yet and do not look like scripts, and `_.file` of a present .env named only by a glob. write_file, wc.toml."""
import sys, os, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws = "/tmp/atk40/ws"
subprocess.run(f"cd {ws} && rm -rf mise.toml .env* .envrc* shell.nix scripts env.d && printf '[env]\\n_.file = [\".env.shared\", \".env.{{{{env.USER}}}}\"]\\n_.source = \"env.d/setup\"\\n' > mise.toml && chown 65534:65534 mise.toml", shell=True, check=True)
print("mise.toml:", open(ws + "/mise.toml").read().replace("\n", " | "))
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/wc.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f11b.log")
for p, c in [(".env.shared", "LD_PRELOAD=./x.so\n"), (".env.root", "NODE_OPTIONS=--require ./x.js\n"), ("env.d/setup", "id > /tmp/x\n")]:
    print(f"write_file {p}:", text(s.call("write_file", {"path": p, "content": c})).strip().replace("\n", " | ")[:200])
s.close()
