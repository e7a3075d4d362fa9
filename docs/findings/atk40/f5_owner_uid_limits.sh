#!/bin/sh
# F5: a root serve runs commands as the *workspace owner* (policy user ""), not 65534 as README's Known gaps says;
# verify/harness hands its arena to 65534 instead, so it never attacks as the uid serve will use. That uid's per-user
# kernel budgets are the owner's whole login: (a) RLIMIT_NPROC (limits.pids) counts the owner's own processes: with
# 70 of them running, a call cannot fork at all; (b) a call holding 128 inotify instances (fs.inotify.max_user_instances)
# makes the owner's host programs' inotify_init fail (editors, file watchers) while it runs.
# Owner: numeric uid 12345 (no user is made). Scratch under /tmp/atk40 only.
sh /work/notes/atk40/setup.sh
set -e
mkdir -p /tmp/atk40/wsu && chown 12345:12345 /tmp/atk40/wsu && chmod 755 /tmp/atk40/wsu
sed -e 's#/tmp/atk40/ws"#/tmp/atk40/wsu"#' -e 's#audit.jsonl#audit-f5.jsonl#' /tmp/atk40/py.toml > /tmp/atk40/f5.toml && chmod 600 /tmp/atk40/f5.toml
cat > /tmp/atk40/f5_id.py <<'EOP'
import os
print("call runs as uid", os.getuid())
try:
    pid = os.fork()
    if pid == 0: os._exit(0)
    os.waitpid(pid, 0); print("fork: ok")
except OSError as e: print("fork:", e)
EOP
echo "--- (a) the call's uid, and a fork, with none of the owner's processes running"
python3 /work/notes/atk40/pyrun.py /tmp/atk40/f5.toml /tmp/atk40/f5_id.py
echo "--- (a) the owner (uid 12345) has 70 processes running (a desktop login has more)"
PIDS=""
for i in $(seq 70); do setpriv --reuid=12345 --regid=12345 --clear-groups sleep 60 & PIDS="$PIDS $!"; done
sleep 1
python3 /work/notes/atk40/pyrun.py /tmp/atk40/f5.toml /tmp/atk40/f5_id.py
kill $PIDS 2>/dev/null || true   # only the sleeps this script started, by their pids
wait 2>/dev/null || true
echo "--- (b) a call holds 128 inotify instances for 6 s; meanwhile a host program of the owner calls inotify_init"
cat > /tmp/atk40/f5_ino.py <<'EOP'
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
fds = [libc.inotify_init1(0) for _ in range(200)]
print("call holds", sum(f >= 0 for f in fds), "inotify instances"); time.sleep(6)
EOP
python3 /work/notes/atk40/pyrun.py /tmp/atk40/f5.toml /tmp/atk40/f5_ino.py &
BG=$!
sleep 3
setpriv --reuid=12345 --regid=12345 --clear-groups /usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); r=l.inotify_init1(0); print("owner host program: inotify_init1 ->", r, "errno", ctypes.get_errno(), "(24 = EMFILE)")'
wait $BG
echo "--- verify's harness hands its arena to 65534 (internal/schemes/allowlist/harness.go Prepare), not to the owner"
