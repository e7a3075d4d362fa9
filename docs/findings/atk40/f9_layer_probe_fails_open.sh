#!/bin/sh
# F9: serve probes the transactional workspace once, at its start; when the probe fails for a passing reason (the
# layers' disk full: simulated by a full 64 KiB tmpfs over /var/tmp/mcpsandbox-layers-0 in a private mount namespace of
# this script only), serve runs its whole life without the layer, saying so only in its log (a WARN): a call's writes
# of protected names that do not exist yet (.envrc, .vscode/tasks.json, CLAUDE.md) land directly.
sh /work/notes/atk40/setup.sh
cd /tmp/atk40 && rm -rf ws/.envrc ws/.vscode ws/CLAUDE.md ws/.claude ws/AGENTS.md
echo "--- normal serve:"
python3 /work/notes/atk40/pyrun.py /tmp/atk40/py.toml /work/notes/atk40/f9_inside.py
ls -la ws/.envrc ws/.vscode ws/CLAUDE.md 2>&1 | sed 's/^/   /'
rm -rf ws/.envrc ws/.vscode ws/CLAUDE.md
echo "--- serve started while the layers' disk is full (then the disk is freed before the call):"
unshare -m --propagation private sh -c '
  mkdir -p /var/tmp/mcpsandbox-layers-0
  mount -t tmpfs -o size=64k,nr_inodes=2,mode=0700 tmpfs /var/tmp/mcpsandbox-layers-0
  dd if=/dev/zero of=/var/tmp/mcpsandbox-layers-0/fill bs=4k count=100 2>/dev/null
  python3 - <<EOP
import sys, os, time
sys.path.insert(0, "/work/notes/atk40")
from stdio import Stdio, text
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/py.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f9.log")
time.sleep(2)
os.remove("/var/tmp/mcpsandbox-layers-0/fill")   # the disk has room again
print(text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", open("/work/notes/atk40/f9_inside.py").read()]})))
print("write_file .claude/settings.json:", text(s.call("write_file", {"path": ".claude/settings.json", "content": "{}"})).strip())
print("write_file venv-less AGENTS.md:", text(s.call("write_file", {"path": "AGENTS.md", "content": "x"})).strip())
s.close()
EOP
  umount /var/tmp/mcpsandbox-layers-0'
ls -la ws/.envrc ws/.vscode/tasks.json ws/CLAUDE.md 2>&1 | sed 's/^/   /'
echo "--- serve's log:"; grep -i 'layer\|transactional' /tmp/atk40/f9.log | cut -c1-400
