#!/usr/bin/env python3
"""Run a python file inside the allowlist sandbox via serve (stdio). usage: pyrun.py POLICY FILE.py [args...]"""
import sys, os, json
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
pol, f = sys.argv[1], sys.argv[2]
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", pol], env={"HOME": "/tmp/atk40b/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/serve.log")
r = s.call("run_allowed_command", {"command": "python3", "args": ["-c", open(f).read()] + sys.argv[3:]})
print(text(r))
s.close()
