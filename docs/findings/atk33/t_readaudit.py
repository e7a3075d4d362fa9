import sys, json
sys.path.insert(0, "/work/notes/atk33")
import stdio
s = stdio.Stdio("/tmp/atk33x/pol.toml")
for p in ["/tmp/atk33/home/.local/state/mcpsandbox/audit.jsonl", "/tmp/atk33x/pol.toml", "/etc/hostname", "/tmp/atk33x/fakehome/.ssh/id_ed25519", "/proc/1/environ", "/var/run/docker.sock"]:
    r = s.run("head", "-c", "80", p)
    print(p, json.dumps(stdio.sc(r))[:200])
