#!/bin/sh
# F8: the seccomp filter is a denylist: syscalls newer than its list reach the kernel (open_tree_attr beside a denied open_tree)
sh /work/notes/atk40/setup.sh
cd /tmp/atk40 && python3 /work/notes/atk40/pyrun.py /tmp/atk40/py.toml /work/notes/atk40/f8_inside.py
