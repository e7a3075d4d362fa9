import sys, os
print(sys.version.split()[0], sys.prefix, [l.split()[-1] for l in open("/proc/self/maps") if "libpython" in l][:1])
import subprocess
print(subprocess.run([sys.executable, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True).stdout.strip())
