import sys, json
sys.path.insert(0, "/work/notes/atk33")
import stdio
s = stdio.Stdio("/tmp/atk33x/pol.toml")
code = r'''
import os
for p in ["/tmp/atk33/home/.local/state/mcpsandbox/audit.jsonl", "/tmp/atk33x/pol.toml", "/etc/hostname", "/tmp/atk33x/fakehome/.ssh/id_ed25519", "/proc/1/cmdline","/tmp","/tmp/atk33x", "/root", "/etc/shadow", "/sys/kernel/notes"]:
    try:
        if os.path.isdir(p): print(p, "DIR", os.listdir(p)[:5])
        else: print(p, open(p,"rb").read(60))
    except Exception as e: print(p, "ERR", e)
'''
r = s.py(code)
print(stdio.sc(r).get("stdout"), stdio.sc(r).get("stderr")[:500])
