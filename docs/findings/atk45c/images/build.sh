#!/bin/sh
# Builds the three test images offline from mcpsandbox-test:bookworm (run from a scratch dir holding the Dockerfiles and launcher.c).
# atk45c-origin:1  python3 = a launcher linked to libpython3.11.so.1.0 with RUNPATH $ORIGIN/../lib, the lib beside it, no ld.so.cache entry
# atk45c-784:1     the same launcher with pyenv's libpython 3.11.7 + its stdlib under /opt/py, and Debian's libpython 3.11.2 in ld.so.cache (docker-library/python#784's layout)
# atk45c-full:1    the test image plus the host's full Debian 3.11 stdlib and libffi (ctypes, multiprocessing)
set -e
gcc -O1 -I/usr/include/python3.11 launcher.c -o python3 -L/usr/lib/x86_64-linux-gnu -lpython3.11 -Wl,-rpath,'$ORIGIN/../lib'
mkdir -p root/opt/py/bin root/opt/py/lib; cp python3 root/opt/py/bin/; cp -L /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 root/opt/py/lib/; ln -sf /usr/lib/python3.11 root/opt/py/lib/python3.11
DOCKER_BUILDKIT=0 docker build -q -t atk45c-origin:1 .
L=/root/.pyenv/versions/3.11.7/lib
mkdir -p r784/opt/py/bin r784/opt/py/lib r784/usr/lib/x86_64-linux-gnu; cp python3 r784/opt/py/bin/; cp -L $L/libpython3.11.so.1.0 r784/opt/py/lib/
(cd $L && tar -c --exclude=test --exclude=site-packages --exclude=__pycache__ --exclude=idlelib --exclude=tkinter --exclude=lib2to3 --exclude=ensurepip --exclude=config-3.11-x86_64-linux-gnu python3.11) | tar -x -C r784/opt/py/lib
cp -L /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 r784/usr/lib/x86_64-linux-gnu/
DOCKER_BUILDKIT=0 docker build -q -f Dockerfile.784 -t atk45c-784:1 .
mkdir -p full/usr/lib/python3.11 full/usr/lib/x86_64-linux-gnu; cp -a /usr/lib/python3.11/. full/usr/lib/python3.11/; rm -rf full/usr/lib/python3.11/test full/usr/lib/python3.11/dist-packages
cp -L /usr/lib/x86_64-linux-gnu/libffi.so.8 full/usr/lib/x86_64-linux-gnu/
DOCKER_BUILDKIT=0 docker build -q -f Dockerfile.full -t atk45c-full:1 .
# atk45c-big:1     Debian's python3.11 with 70 MB of zeros appended (runs as before), first on PATH: larger than RLIMIT_FSIZE (64 MiB)
mkdir -p big/opt/big; cp /usr/bin/python3.11 big/opt/big/python3; head -c 70000000 /dev/zero >> big/opt/big/python3; chmod 755 big/opt/big/python3
DOCKER_BUILDKIT=0 docker build -q -f Dockerfile.big -t atk45c-big:1 .
