#!/usr/bin/env python3
"""internal/homelinks: links from the home into the workspace (a dotfiles repository) that Find does not see or
does not protect. The home is serve's (HOME=/tmp/atk40b/home); the workspace /tmp/atk40b/ws is the dotfiles repo.
Each case: a home link (as GNU stow / chezmoi symlink mode / a dotfiles install.sh makes), then write_file of what
the host reads through it. Controls: ~/.cursor/mcp.json (one level into a dot-dir) and ~/.config/zed/settings.json."""
import sys, os, subprocess, json, shutil, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws, home = "/tmp/atk40b/ws", "/tmp/atk40b/home"
shutil.rmtree(home, ignore_errors=True); os.makedirs(home)
for e in os.listdir(ws):
    p = f"{ws}/{e}"; shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
def put(rel, content="{}\n"):
    os.makedirs(os.path.dirname(f"{ws}/{rel}"), exist_ok=True); open(f"{ws}/{rel}", "w").write(content)
def link(h, target):
    os.makedirs(os.path.dirname(f"{home}/{h}"), exist_ok=True); os.symlink(target, f"{home}/{h}")
cases = [
 ("control ~/.cursor/mcp.json", ".cursor/mcp.json", "cursor/mcp.json", "cursor/mcp.json"),
 ("control ~/.config/zed/settings.json", ".config/zed/settings.json", "zed/settings.json", "zed/settings.json"),
 ("VS Code user MCP config ~/.config/Code/User/mcp.json", ".config/Code/User/mcp.json", "vscode/mcp.json", "vscode/mcp.json"),
 ("VS Code user tasks ~/.config/Code/User/tasks.json", ".config/Code/User/tasks.json", "vscode/tasks.json", "vscode/tasks.json"),
 ("Windsurf MCP config ~/.codeium/windsurf/mcp_config.json", ".codeium/windsurf/mcp_config.json", "windsurf/mcp_config.json", "windsurf/mcp_config.json"),
 ("~/.local/bin/git-sync (on PATH)", ".local/bin/git-sync", "bin/git-sync", "bin/git-sync"),
 ("systemd user unit ~/.config/systemd/user/sync.service", ".config/systemd/user/sync.service", "systemd/sync.service", "systemd/sync.service"),
 # a chain: ~/.bashrc -> ws/bashrc (a link in the repo) -> ws/shell/bashrc: the resolved target is protected, the link in the middle is not
 ("chain: the workspace link in the middle (ws/bashrc -> shell/bashrc)", ".bashrc", "@bashrc->shell/bashrc", "bashrc"),
 # a chain out: ~/.profile -> ws/profile -> /etc/profile (a repo link to the system's file): resolves outside, nothing protected
 ("chain out: ws/profile -> /etc/profile", ".profile", "@profile->/etc/profile", "profile"),
]
for name, h, target, w in cases:
    if target.startswith("@"):
        l, t = target[1:].split("->")
        if not t.startswith("/"): put(t, "# rc\n")
        os.symlink(t, f"{ws}/{l}")
        link(h, f"{ws}/{l}")
    else:
        put(target); link(h, f"{ws}/{target}")
subprocess.run(f"chown -R -h 65534:65534 {ws}", shell=True, check=True)
s = Stdio(["/tmp/atk40b/mcpsandbox", "serve", "--policy", "/tmp/atk40b/wc.toml"], env={"HOME": home, "PATH": "/usr/bin:/bin"}, err="/tmp/atk40b/f2.log")
for name, h, target, w in cases:
    r = text(s.call("write_file", {"path": w, "content": "echo call-controlled\n"})).strip().replace("\n", " | ")
    verdict = "APPLIED" if "1 change(s) applied" in r else "REFUSED"
    print(f"{verdict}: {name}: write_file {w}: {r[-110:]}")
s.close()
print("--- afterwards, as the host reads them:")
for name, h, target, w in cases:
    try: print(f"~/{h}: {open(home + '/' + h).read().strip()!r}  (ws/{w} is {'a link' if os.path.islink(ws+'/'+w) else 'a file'})")
    except Exception as e: print(f"~/{h}: {e}")
