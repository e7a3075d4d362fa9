#!/bin/sh
# F10: read_paths = ["/proc"] passes serve and verify (no MS rule; MS109 is for homes and secrets dirs), and the
# call's pid namespace does not reach /proc's contents (the host's procfs, not one of the call's namespace): every host
# process's command line is listed, and with a serve that is not root (commands under the developer's uid) the
# environment of serve and of the MCP client that started it (API keys) is read.
sh /work/notes/atk40/f5b_nonroot_setup.sh
H=/home/atk40u
sed 's/^network = false/network = false\nread_paths = ["\/proc"]/' $H/.config/f5b.toml > $H/.config/f10.toml
chown atk40u:atk40u $H/.config/f10.toml; chmod 600 $H/.config/f10.toml
cp /work/notes/atk40/f10_inside.py $H/; chown atk40u $H/f10_inside.py
cat > $H/client.py <<'EOP'
import sys, os; sys.path.insert(0, "/home/atk40u")
from stdio import Stdio, text
# the MCP client: its own environment holds the user's API key; it passes serve only HOME and PATH
s = Stdio(["/home/atk40u/mcpsandbox", "serve", "--policy", "/home/atk40u/.config/f10.toml"], env={"HOME": "/home/atk40u", "PATH": "/usr/bin:/bin"}, err="/home/atk40u/serve10.log")
print(text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", open("/home/atk40u/f10_inside.py").read()]})))
s.close()
EOP
chown atk40u $H/client.py
echo "--- verify --no-harness (read_paths = [\"/proc\"]):"
setpriv --reuid=atk40u --regid=atk40u --init-groups env HOME=$H /home/atk40u/mcpsandbox verify --policy $H/.config/f10.toml --no-harness 2>&1 | grep -E 'MS1|verify:'
echo "--- the client (ANTHROPIC_API_KEY=sk-ant-SECRET-atk40 in its environment) calls:"
cd $H && setpriv --reuid=atk40u --regid=atk40u --init-groups env -i HOME=$H PATH=/usr/bin:/bin ANTHROPIC_API_KEY=sk-ant-SECRET-atk40 /usr/bin/python3 $H/client.py
