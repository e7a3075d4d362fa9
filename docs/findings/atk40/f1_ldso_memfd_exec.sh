#!/bin/sh
# F1: an allowlist call whose interpreter is pinned runs unpinned programs: the ELF interpreter (ld.so, executable by
# the Landlock rule) runs any readable ELF (/bin/sh with a planted script, perl), and a memfd runs any bytes.
# The harness's planted-binary-exec scenario tries only ./payload, /bin/sh ./payload and env sh: CONTAINED.
sh /work/notes/atk40/setup.sh
cd /tmp/atk40 && python3 /work/notes/atk40/pyrun.py /tmp/atk40/py.toml /work/notes/atk40/f1_inside.py
cd /tmp/atk40 && ./mcpsandbox harness --policy py.toml --scenario planted-binary-exec,ld-preload
