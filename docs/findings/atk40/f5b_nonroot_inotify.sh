#!/bin/sh
# F5b: a serve that is not root (the usual set-up: the developer's own serve): a call's inotify instances are charged to
# the developer's uid in the initial user namespace too (ucounts are hierarchical), so a call holding 128 of them
# makes the developer's own programs (editor, file watchers) fail inotify_init while it runs.
sh /work/notes/atk40/f5b_nonroot_setup.sh
cat > /home/atk40u/run.py <<'EOP'
import sys; sys.path.insert(0, "/home/atk40u")
from stdio import Stdio, text
s = Stdio(["/home/atk40u/mcpsandbox", "serve", "--policy", "/home/atk40u/.config/f5b.toml"], env={"HOME": "/home/atk40u", "PATH": "/usr/bin:/bin"}, err="/home/atk40u/serve.log")
print(text(s.call("run_allowed_command", {"command": "python3", "args": ["-c", open("/home/atk40u/f5_ino.py").read()]})))
s.close()
EOP
chown atk40u /home/atk40u/run.py
cd /home/atk40u
setpriv --reuid=atk40u --regid=atk40u --init-groups /usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print("before: the user\x27s own program: inotify_init1 ->", l.inotify_init1(0))'
setpriv --reuid=atk40u --regid=atk40u --init-groups /usr/bin/python3 /home/atk40u/run.py &
BG=$!
sleep 3
setpriv --reuid=atk40u --regid=atk40u --init-groups /usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); r=l.inotify_init1(0); print("during the call: the user\x27s own program: inotify_init1 ->", r, "errno", ctypes.get_errno(), "(24 = EMFILE)")'
wait $BG
setpriv --reuid=atk40u --regid=atk40u --init-groups /usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); print("after: inotify_init1 ->", l.inotify_init1(0))'
