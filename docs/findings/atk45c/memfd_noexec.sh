#!/bin/sh
# Run as root on the host: sh memfd_noexec.sh N. In a fresh pid namespace of its own (the host's is
# untouched: vm.memfd_noexec is per pid namespace, inherited by child namespaces), set
# vm.memfd_noexec=N, then start the watchdog (watchdog.py, mainPy() dumped by TestAtk45cDumpWatchdog)
# as serve's entrypoint does, as pid 1 of a further pid namespace under uid 65534, with a
# "wrapper" that reports whether pid 1 is reachable through /proc.
D=$(dirname "$0")
WRAP='import os
try:
    os.close(os.open("/proc/1/environ", os.O_RDONLY)); print("wrapper: /proc/1/environ OPENED: pid 1 is dumpable (reachable)")
except OSError as e:
    print("wrapper: /proc/1/environ:", e.strerror, "(pid 1 non-dumpable)")
print("wrapper: exe of pid 1 as its own /proc/self/exe:", os.readlink("/proc/self/exe"))'
export WRAP D N=$1
unshare --pid --fork --mount-proc sh -c '
sysctl -q -w vm.memfd_noexec=$N; echo "vm.memfd_noexec=$(cat /proc/sys/vm/memfd_noexec) in this pid namespace"
unshare --pid --fork --mount-proc setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
  /usr/bin/python3.11 -I -S -c "$(cat $D/watchdog.py)" "$WRAP" nonce cold </dev/null 2>&1
echo "(pid 1 wrote nothing else: the fallback is silent)"'
