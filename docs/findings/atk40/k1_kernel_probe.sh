#!/bin/sh
# k1: kernel interfaces from inside an allowlist call (python3 pinned): runs k1_kernel_probe.py in the sandbox
sh /work/notes/atk40/setup.sh
cd /tmp/atk40 && python3 /work/notes/atk40/pyrun.py /tmp/atk40/py.toml /work/notes/atk40/k1_kernel_probe.py
