package sandbox

// sessionPy turns a started container's wrapper (wrapperPy, pooled or cold) into a session's
// supervisor (docker.reuse = "session"). serve delivers it as the wrapper's one "program", with
// the kind "session" that only serve writes (a model's code never reaches the header), and the
// wrapper runs it in its own globals (nonce, safe_path, program_path, w).
//
// The supervisor:
//   - closes fd 3 unwritten, so the watchdog (watchdogPy, its parent) keeps no timeout and leaves
//     the attached stdin alone (the next call's bytes would make it readable), and takes that job: it reads the attached
//     stdin itself, and at EOF (serve removed the session, or died, even by SIGKILL, and the
//     engine closed the stream) kills every process it can (kill -1) and exits, so the container
//     stops and the next serve reaps it (reap.go);
//   - starts the session's Python interpreter, a child process (REPL below) that keeps one
//     __main__ namespace for the session's calls, so `x = 41` then `print(x + 1)` prints 42;
//   - then serves calls, one at a time: "call KIND CALLNONCE RESET LENGTH\n" and LENGTH bytes of
//     source on stdin; Python goes to the interpreter (a fresh one first when RESET is 1, or when
//     the last one died), a shell script to /bin/sh from a memfd as in a per-call container;
//     the program's stdin is /dev/null (never the attached stdin, which carries the next calls);
//   - after each call writes the end mark "mcpsandbox-end:CALLNONCE:STATUS:OOMKILLS\n" on
//     stdout and stderr. The nonce is the call's own: a mark a program forges (it can read the
//     nonce: same uid) or one left behind by a call cut short never ends another call early;
//   - when the interpreter dies during a call (os._exit, a segfault, an out-of-memory kill) it
//     says so on stderr, starts a fresh one, and reports the exit status (128+N for signal N).
//
// Once the interpreter is started it writes "mcpsandbox-session:NONCE\n" on stderr. serve never
// sends a call while another runs; the timeout is serve's: a call that overruns it has its
// container removed (session.go), so the supervisor keeps no clock of its own.
const sessionPy = `import signal, select
try:
    os.close(w)
except OSError:
    pass
REPL = r"""
import sys
program_path = sys.path
` + isolateLine + `
sys.path = safe_path
import os
me = os.getpid()
` + newMainPy + `
main = new_main()
wrapper_main, sys.modules["__main__"] = sys.modules["__main__"], main
g = main.__dict__
sys.argv = ["-"]
` + sessionExitPy + `
def need(n):
    b = []
    while n > 0:
        c = os.read(3, min(n, 1 << 20))
        if not c:
            os._exit(0)
        b.append(c)
        n -= len(c)
    return b"".join(b)
while True:
    head = b""
    while not head.endswith(b"\n"):
        c = os.read(3, 1)
        if not c:
            os._exit(0)
        head += c
    src = need(int(head)).decode("utf-8", "surrogateescape")
    status = 0
    sys.path = program_path
    try:
        exec(compile(src, "<stdin>", "exec"), g)
    except SystemExit as e:
        c = e.code
        if c is None:
            status = 0
        elif isinstance(c, int):
            status = c & 0xFF
        else:
            print(c, file=sys.stderr)
            status = 1
    except BaseException as e:
        user_path, sys.path = sys.path, safe_path
        try:
            import traceback
            tb = e.__traceback__.tb_next if e.__traceback__ is not None else None
            traceback.print_exception(type(e), e, tb)
        finally:
            sys.path = user_path
        status = 130 if isinstance(e, KeyboardInterrupt) else 1
    end_call()
    program_path = sys.path
    sys.path = safe_path
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    if os.getpid() != me:
        os._exit(status)
    os.write(4, b"%d\n" % status)
"""
sin = b""
def die():
    try:
        os.kill(-1, signal.SIGKILL)
    finally:
        os._exit(0)
def more():
    global sin
    c = os.read(0, 1 << 16)
    if not c:
        die()
    sin += c
def take(n):
    global sin
    if len(sin) >= n:
        b, sin = sin[:n], sin[n:]
        return b
    parts, have, sin = [sin], len(sin), b""
    while have < n:
        c = os.read(0, min(n - have, 1 << 20))
        if not c:
            die()
        parts.append(c)
        have += len(c)
    return b"".join(parts)
def line():
    global sin
    while b"\n" not in sin:
        more()
    b, _, sin = sin.partition(b"\n")
    return b
repl = None
def start_repl():
    global repl
    cr, cw = os.pipe()
    rr, rw = os.pipe()
    pid = os.posix_spawn(sys.executable, [sys.executable, "-c", REPL], dict(os.environ),
                         file_actions=[(os.POSIX_SPAWN_DUP2, cr, 3), (os.POSIX_SPAWN_DUP2, rw, 4),
                                       (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0)])
    os.close(cr)
    os.close(rw)
    try:
        pfd = os.pidfd_open(pid)
    except Exception:
        pfd = None
    repl = (pid, cw, rr, pfd)
def stop_repl():
    global repl
    if repl is None:
        return
    pid, cw, rr, pfd = repl
    repl = None
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass
    for fd in (cw, rr, pfd):
        if fd is not None:
            os.close(fd)
def wait_any(fds):
    while True:
        r, _, _ = select.select(fds + [0], [], [])
        if 0 in r:
            more()
        got = [f for f in r if f in fds]
        if got:
            return got
def wait_fd(fd):
    wait_any([fd])
def status_of(ws):
    s = os.waitstatus_to_exitcode(ws)
    return 128 - s if s < 0 else s
def run_python(src, reset):
    global repl
    if reset:
        stop_repl()
    if repl is None:
        start_repl()
    pid, cw, rr, pfd = repl
    data = b"%d\n" % len(src) + src
    try:
        while data:
            wait_w = select.select([0], [cw], [])
            if 0 in wait_w[0]:
                more()
            if cw in wait_w[1]:
                data = data[os.write(cw, data[:1 << 16]):]
    except OSError:
        pass
    got = b""
    fds = [rr] if pfd is None else [rr, pfd]
    while not got.endswith(b"\n"):
        ready = wait_any(fds)
        if rr not in ready:
            break  # the interpreter exited (a process it started may still hold the pipe open)
        c = os.read(rr, 64)
        if not c:
            break
        got += c
    if got.endswith(b"\n"):
        return int(got)
    try:
        os.kill(pid, signal.SIGKILL)  # it closed the pipe but lives on: it is ended, as a crash
    except OSError:
        pass
    _, ws = os.waitpid(pid, 0)
    st = status_of(ws)
    how = "with status %d" % st if st < 128 else "by signal %d" % (st - 128)
    os.write(2, ("\n[mcpsandbox: the session's Python interpreter ended %s during this call; a fresh one was started: "
                 "variables and imports of earlier calls are gone, files in /tmp are kept]\n" % how).encode())
    for fd in (cw, rr, pfd):
        if fd is not None:
            os.close(fd)
    repl = None
    start_repl()
    return st
def run_shell(src):
    fd = os.memfd_create("script", 0)
    os.write(fd, src)
    try:
        pid = os.posix_spawn("/bin/sh", ["sh", "/proc/self/fd/%d" % fd], dict(os.environ),
                             file_actions=[(os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0)])
    except OSError as e:
        os.write(2, ("mcpsandbox: cannot run /bin/sh: %s\n" % e).encode())
        return 127
    finally:
        os.close(fd)
    try:
        pfd = os.pidfd_open(pid)
    except Exception:
        pfd = None
    while True:
        if pfd is not None:
            wait_fd(pfd)
        else:
            r, _, _ = select.select([0], [], [], 0.01)
            if r:
                more()
        p, ws = os.waitpid(pid, os.WNOHANG if pfd is None else 0)
        if p:
            break
    if pfd is not None:
        os.close(pfd)
    return status_of(ws)
def oom_kills():
    oom = 0
    for p in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
        try:
            fd = os.open(p, os.O_RDONLY)
            try:
                lines = os.read(fd, 1 << 16).split(b"\n")
            finally:
                os.close(fd)
            for l in lines:
                k, _, v = l.partition(b" ")
                if k == b"oom_kill":
                    oom = int(v)
        except Exception:
            pass
    return oom
def base_dir():
    if repl is not None:
        try:
            return os.readlink(b"/proc/%d/cwd" % repl[0])
        except OSError:
            pass
    return os.getcwdb()
def where(p):
    return p if p.startswith(b"/") else os.path.join(base_dir(), p)
def reply(cn, rec):
    emit(b"mcpsandbox-data:%s:%s\n" % (cn, rec))
def file_op(cn, kind, src):
    try:
        if kind == b"write":
            n, _, rest = src.partition(b"\n")
            n = int(n)
            p = where(rest[:n])
            d = os.path.dirname(p)
            if d:
                os.makedirs(d, exist_ok=True)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
            try:
                if os.fstat(fd).st_mode & 0o170000 != 0o100000:
                    raise OSError("not a regular file: %s" % os.fsdecode(p))
                data = memoryview(rest)[n:]
                size = len(data)
                while data:
                    data = data[os.write(fd, data):]
            finally:
                os.close(fd)
            reply(cn, b"w,%d" % size)
        elif kind == b"read":
            n, _, p = src.partition(b"\n")
            fd = os.open(where(p), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                st = os.fstat(fd)
                if st.st_mode & 0o170000 != 0o100000:
                    raise OSError("not a regular file: %s" % os.fsdecode(where(p)))
                data = read_max(fd, int(n) + 1)
            finally:
                os.close(fd)
            reply(cn, b"r,%d,%s" % (st.st_size, b64(data)))
        else:
            p = where(src) if src else base_dir()
            ents, left = [], 0
            with os.scandir(p) as it:
                for ent in it:
                    if len(ents) >= 1000:
                        left += 1
                        continue
                    t, size = b"o", 0
                    try:
                        if ent.is_symlink():
                            t = b"l"
                        elif ent.is_dir(follow_symlinks=False):
                            t = b"d"
                        elif ent.is_file(follow_symlinks=False):
                            t, size = b"f", ent.stat(follow_symlinks=False).st_size
                    except OSError:
                        pass
                    ents.append(b",%s,%s,%d" % (b64(ent.name), t, size))
            reply(cn, b"l,%d%s" % (left, b"".join(ents)))
        return 0
    except Exception as e:
        reply(cn, b"e," + b64(("%s: %s" % (type(e).__name__, e)).encode("utf-8", "replace")))
        return 1
start_repl()
os.write(2, ("mcpsandbox-session:%s\n" % nonce).encode())
while True:
    head = line().split()
    if len(head) != 5 or head[0] != b"call":
        os.write(2, b"mcpsandbox: a malformed call header from serve\n")
        die()
    _, kind, cn, reset, n = head
    src = take(int(n))
    if kind == b"python":
        status = run_python(src, reset == b"1")
    elif kind == b"shell":
        status = run_shell(src)
    elif kind in (b"write", b"read", b"list"):
        status = file_op(cn, kind, src)
    else:
        os.write(2, b"mcpsandbox: unknown tool\n")
        status = 127
    if kind in (b"python", b"shell"):
        try:
            outputs(cn, True)
        except Exception:
            pass
    mark = b"mcpsandbox-end:%s:%d:%d\n" % (cn, status, oom_kills())
    for fd in (1, 2):
        try:
            os.write(fd, mark)
        except OSError:
            pass
`

// sessionExitPy ends each of a session's Python calls as exitPy ends a per-call program (atk48b
// F2), where the interpreter lives on for the next call: before the end mark it waits for the
// non-daemon threads (but a ThreadPoolExecutor's workers, which a later call may still use: what
// the program keeps in a variable stays usable, as in an interactive interpreter), then runs the
// atexit handlers registered during the call, last first, and forgets them: they do not run again
// at the next call's end. atexit.register is the REPL's own for that; the standard library's own
// exit hooks (logging's shutdown, weakref.finalize's, multiprocessing's) go to the real one and stay
// for the interpreter's end: run after a call, they closed a log file or disabled every finalizer
// for the calls after it. An exception in a handler is printed and ignored, as at exit.
const sessionExitPy = `import atexit
call_exits = []
real_register, real_unregister = atexit.register, atexit.unregister
def register(func, *args, **kwargs):
    if getattr(func, "__module__", None) in ("logging", "weakref", "multiprocessing.util"):
        return real_register(func, *args, **kwargs)
    if not callable(func):
        raise TypeError("the first argument must be callable")
    call_exits.append((func, args, kwargs))
    return func
def unregister(func):
    call_exits[:] = [c for c in call_exits if c[0] != func]
    real_unregister(func)
atexit.register, atexit.unregister = register, unregister
def end_call():
    th = sys.modules.get("threading")
    while th is not None:
        cf = sys.modules.get("concurrent.futures.thread")
        pool = set(cf._threads_queues) if cf is not None else ()
        left = [t for t in th.enumerate() if not t.daemon and t is not th.current_thread() and t not in pool]
        if not left:
            break
        for t in left:
            t.join()
    while call_exits:
        func, args, kwargs = call_exits.pop()
        try:
            func(*args, **kwargs)
        except BaseException:
            user_path, sys.path = sys.path, safe_path
            try:
                import traceback
                print("Exception ignored in atexit callback: %r" % (func,), file=sys.stderr)
                traceback.print_exc()
            finally:
                sys.path = user_path`
