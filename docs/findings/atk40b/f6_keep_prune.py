#!/usr/bin/env python3
"""keep store (keep_linux.go): one store per user, $XDG_STATE_HOME/mcpsandbox/refused, shared by every serve of that
user, pruned to the last 50 calls whoever made them. Session B (workspace wsB) has a refused file kept ("kept for
review in …"); session A (another workspace, another client) makes 50 calls with a refused write each: B's kept
content is removed. Both serves run as root with the same HOME (two projects of one user)."""
import sys, os, subprocess, re, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
home = "/tmp/atk40b/home"
shutil.rmtree(home, ignore_errors=True); os.makedirs(home)
for w in ("wsA", "wsB"):
    shutil.rmtree(f"/tmp/atk40b/{w}", ignore_errors=True); os.makedirs(f"/tmp/atk40b/{w}"); os.chown(f"/tmp/atk40b/{w}", 65534, 65534)
    pol = open("/tmp/atk40b/py.toml").read().replace('workspace = "/tmp/atk40b/ws"', f'workspace = "/tmp/atk40b/{w}"')
    open(f"/tmp/atk40b/{w}.toml", "w").write(pol); os.chmod(f"/tmp/atk40b/{w}.toml", 0o600)
env = {"HOME": home, "PATH": "/usr/bin:/bin"}
b = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wsB.toml"], env=env, err="/tmp/atk40b/f6b.log")
r = text(b.call("run_allowed_command", {"command": "python3", "args": ["-c", "open('CLAUDE.md','w').write('the draft B asked for\\n')"]}))
m = re.search(r"kept for review in (\S+)", r)
kept = m.group(1) if m else None
print("B:", r.strip().replace("\n", " | ")[-260:])
print("B's kept dir exists:", kept and os.path.isdir(kept))
a = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wsA.toml"], env=env, err="/tmp/atk40b/f6a.log")
for i in range(50):
    a.call("run_allowed_command", {"command": "python3", "args": ["-c", f"open('CLAUDE.md','w').write('{i}')"]})
a.close()
print("after A's 50 refused calls, B's kept dir exists:", kept and os.path.isdir(kept))
print("store holds:", len(os.listdir(home + "/.local/state/mcpsandbox/refused")), "call directories")
b.close()
