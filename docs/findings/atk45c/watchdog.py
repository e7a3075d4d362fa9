import os, sys, select, signal, time
exe = sys.executable
if sys.argv[1:2] == ["--unreachable"]:
    os.dup2(int(sys.argv[2]), 99, inheritable=False)
    os.close(int(sys.argv[2]))
    exe = "/proc/self/fd/99"
    del sys.argv[1:3]
else:
    r = -1
    try:
        a = open("/proc/self/cmdline", "rb").read().split(b"\0")
        src = os.open(sys.executable, os.O_RDONLY | os.O_CLOEXEC)
        m = os.memfd_create("mcpsandbox-watchdog")
        while os.sendfile(m, src, None, 1 << 24):
            pass
        os.close(src)
        r = os.open("/proc/self/fd/%d" % m, os.O_RDONLY)
        os.close(m)
        os.fchmod(r, 0o100)
        os.set_inheritable(r, True)
        os.execv("/proc/self/fd/%d" % r, [sys.executable, "-I", "-S", "-c", a[a.index(b"-c") + 1], "--unreachable", str(r)] + sys.argv[1:])
    except Exception:
        if r >= 0:
            os.close(r)
sr, sw = os.pipe()
os.set_blocking(sw, False)
signal.set_wakeup_fd(sw)
signal.signal(signal.SIGCHLD, lambda s, f: None)
signal.signal(signal.SIGINT, signal.SIG_IGN)
r, w = os.pipe()
pid = os.posix_spawn(exe, [sys.executable] + sys.argv, dict(os.environ), file_actions=[(os.POSIX_SPAWN_DUP2, w, 3)], setsigdef=[signal.SIGINT])
os.close(w)
po = select.poll()
po.register(sr, select.POLLIN)
po.register(r, select.POLLIN)
deadline = None
def end():
    try:
        os.kill(-1, signal.SIGKILL)
    finally:
        os._exit(137)
def reap():
    while True:
        try:
            p, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if p == 0:
            return
        if p == pid:
            os._exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
while True:
    left = None if deadline is None else max(0, int((deadline - time.monotonic()) * 1000) + 1)
    try:
        ev = po.poll(left)
    except InterruptedError:
        ev = []
    reap()
    for fd, e in ev:
        if fd == sr:
            os.read(sr, 4096)
        elif fd == r:
            t = os.read(r, 32)
            po.unregister(r)
            os.close(r)
            if t:
                deadline = time.monotonic() + int(t) / 1000.0 + 5
                po.register(0, select.POLLIN)
            else:
                po.register(0, 0)
        elif fd == 0:
            end()
    if deadline is not None and time.monotonic() >= deadline:
        end()
