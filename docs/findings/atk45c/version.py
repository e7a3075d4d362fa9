import sys, os
print(sys.version.split()[0], sys.executable, os.readlink("/proc/self/exe"))
