package sandbox

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-units"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Fixed hardening values not in the policy: small enough to stop a disk or descriptor bomb,
// large enough for ordinary scripts.
const (
	tmpfsBytes   = 64 << 20 // /tmp, a tmpfs: counted against limits.memory too
	shmBytes     = 16 << 20 // /dev/shm
	fsizeBytes   = FileSizeLimit
	nofileLimit  = 1024 // RLIMIT_NOFILE
	defaultUser  = "65534:65534"
	workspaceDir = "/workspace"
	boxHostname  = "sandbox"
)

// FileSizeLimit is RLIMIT_FSIZE in every container: the largest file a call may write anywhere.
const FileSizeLimit = 64 << 20

// Label keys on every container mcpsandbox starts. The instance labels let a later serve tell
// whether the serve that started a container is still alive (see reap.go).
const (
	LabelApp      = "dev.mcpsandbox"          // "1"
	LabelInstance = "dev.mcpsandbox.instance" // host/pid/start, for humans and filters
	LabelHost     = "dev.mcpsandbox.host"
	LabelMachine  = "dev.mcpsandbox.machine" // /etc/machine-id
	LabelBoot     = "dev.mcpsandbox.boot"    // kernel boot id
	LabelPIDNS    = "dev.mcpsandbox.pidns"   // pid namespace of serve
	LabelPID      = "dev.mcpsandbox.pid"
	LabelStart    = "dev.mcpsandbox.start" // serve's start time in clock ticks since boot
	LabelCall     = "dev.mcpsandbox.call"  // the one call this container serves
	LabelPolicy   = "dev.mcpsandbox.policy"
	LabelPooled   = "dev.mcpsandbox.pooled"
)

// wrapperPy runs in every container, blocked reading its program from the attached stdin: a
// header line "TOOL TIMEOUT_MS LENGTH" (TOOL is python or shell), then LENGTH bytes of source.
// It runs the program, then writes the end mark "mcpsandbox-end:NONCE:STATUS:OOMKILLS\n" on
// stdout AND stderr (each stream is ordered on its own, the two are not ordered against each
// other, so serve waits for both). Python code runs in this interpreter (started ahead: no
// interpreter start-up on the call's path); shell scripts run in /bin/sh from a memfd (no
// argument-size limit), spawned without fork. The program's stdin is /dev/null.
//
// Once started it writes "mcpsandbox-ready:NONCE\n" on stderr. A pooled container ("pooled" in
// argv) first warms the compiler: serve pools it only after that line, so a pooled call never
// waits for it. The watchdog (watchdogPy) is the wrapper's parent, the container's pid 1:
// it exists before the wrapper does, and reads the call's timeout from fd 3 and watches the
// attached stdin for EOF; see watchdogPy.
//
// Why a forged mark is harmless: the nonce is not secret from the program (it is in this
// process's argv, and the program runs as the same uid in the same container). A program that
// prints the mark itself only makes serve return its own call early, with output cut at the
// forged mark and the exit status it chose — all things it could do anyway by exiting. The
// container still serves only this call and is destroyed right after, so nothing it leaves
// running survives, and no other call's output or status can be touched: each call has its own
// container, its own attach stream and its own nonce. The mark is a speed-up, never a security
// boundary; without it (os._exit, a crash, a killed wrapper) serve falls back to the engine's
// exit status. Killing the watchdog (the main process) ends the container.
//
// Python code runs in the wrapper's own process, so a child the program forks (os.fork) runs
// the rest of the wrapper when it returns or calls sys.exit: such a child ends there (os._exit
// with its status) instead of writing the end mark, which had ended the call at the child's
// exit with the parent's output and status lost.
const wrapperPy = `import sys
program_path = sys.path
` + isolateLine + `
sys.path = safe_path
import os
nonce = sys.argv[1]
path_note = sys.argv[3] if len(sys.argv) > 3 else ""
reach = sys.argv[6] if len(sys.argv) > 6 else "reachable (no watchdog)"
if reach == "prctl":
    reach = "reachable (the wrapper's prctl failed)"
    stdlib = getattr(sys, "_stdlib_dir", None) or os.path.dirname(os.__file__)
    sys.path = [stdlib, stdlib + "/lib-dynload"]
    try:
        import ctypes
        if ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0:
            reach = "prctl"
    except Exception:
        pass
    sys.path = safe_path
me = os.getpid()
import binascii
OUTPUTS = b"/tmp/outputs"
try:
    os.mkdir(OUTPUTS)
except OSError:
    pass
def emit(b):
    b = memoryview(b)
    while b:
        try:
            b = b[os.write(1, b):]
        except InterruptedError:
            pass
def b64(x):
    return binascii.b2a_base64(x, newline=False)
def read_max(fd, n):
    got, have = [], 0
    while have < n:
        c = os.read(fd, min(n - have, 1 << 20))
        if not c:
            break
        got.append(c)
        have += len(c)
    return b"".join(got)
def outputs(cn, clear):
    try:
        names = sorted(os.listdir(OUTPUTS))
    except OSError:
        names = []
    described, sent, total, more = 0, 0, 0, 0
    for nm in names:
        p = OUTPUTS + b"/" + nm
        if described < 16:
            try:
                fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
                try:
                    st = os.fstat(fd)
                    if st.st_mode & 0o170000 == 0o100000:
                        size, data = st.st_size, b""
                        if sent < 8 and size <= 4 << 20 and total + size <= 8 << 20:
                            data = read_max(fd, (4 << 20) + 1)
                            if len(data) > 4 << 20 or total + len(data) > 8 << 20:
                                size, data = max(size, len(data)), b""
                        if data:
                            sent += 1
                            total += len(data)
                        described += 1
                        emit(b"mcpsandbox-data:%s:i,%s,%d,%s\n" % (cn, b64(nm), size, b64(data)))
                        del data
                finally:
                    os.close(fd)
            except OSError:
                pass
        else:
            more += 1
        if clear:
            try:
                if os.path.isdir(p) and not os.path.islink(p):
                    import shutil
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    os.unlink(p)
            except OSError:
                pass
    if more:
        emit(b"mcpsandbox-data:%s:n,%d\n" % (cn, more))
    if clear:
        try:
            os.mkdir(OUTPUTS)
        except OSError:
            pass
pooled = sys.argv[2:3] == ["pooled"]
EGRESS_SOCK = "/run/mcpsandbox-egress/egress.sock"
RELAY = """
import os, socket, selectors
sel = selectors.DefaultSelector()
l = socket.socket()
l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("127.0.0.1", 3128))
l.listen(64)
sel.register(l, selectors.EVENT_READ)
os.write(3, b"1")
os.close(3)
peer, done = {}, set()
def drop(s):
    for x in (s, peer.get(s)):
        if x is None:
            continue
        peer.pop(x, None)
        done.discard(x)
        try:
            sel.unregister(x)
        except (KeyError, ValueError):
            pass
        x.close()
while True:
    for k, _ in sel.select():
        s = k.fileobj
        if s is l:
            try:
                c, _ = l.accept()
            except OSError:
                continue
            u = socket.socket(socket.AF_UNIX)
            try:
                u.connect("/run/mcpsandbox-egress/egress.sock")
            except OSError:
                c.close()
                u.close()
                continue
            peer[c], peer[u] = u, c
            sel.register(c, selectors.EVENT_READ)
            sel.register(u, selectors.EVENT_READ)
            continue
        if s not in peer:
            continue
        try:
            d = s.recv(65536)
            if d:
                peer[s].sendall(d)
                continue
        except OSError:
            drop(s)
            continue
        sel.unregister(s)
        done.add(s)
        try:
            peer[s].shutdown(socket.SHUT_WR)
        except OSError:
            pass
        if peer[s] in done:
            drop(s)
"""
w = 3
if os.path.exists(EGRESS_SOCK):
    rr, rw = os.pipe()
    os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-c", RELAY], dict(os.environ),
                   file_actions=[(os.POSIX_SPAWN_DUP2, rw, 3), (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                                 (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0),
                                 (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0)])
    os.close(rw)
    os.read(rr, 1)
    os.close(rr)
` + userStartPy + `
import site
` + programEnvPy + `
` + newMainPy + `
if pooled:
    exec(compile("pass", "<warm-up>", "exec"))
k = os.fork()
if k == 0:
    code = 0
    for i, p in enumerate(("/proc/1/fd/0", "/proc/%d/fd/0" % me)):
        try:
            os.close(os.open(p, os.O_WRONLY | os.O_NONBLOCK))
            code |= 1 << i
        except OSError:
            pass
    os._exit(code)
code = os.waitpid(k, 0)[1] >> 8
if code and not reach.startswith("reachable"):
    reach = "reachable (%s /proc opened by a process of its uid though it used %s)" % ("pid 1's" if code & 1 else "the wrapper's", reach)
os.write(2, ((path_note and "mcpsandbox-path:%s\n" % " ".join(path_note.split("\n"))) + "mcpsandbox-pid1:%s\nmcpsandbox-ready:%s\n" % (reach, nonce)).encode())
data = b""
while b"\n" not in data:
    c = os.read(0, 1 << 16)
    if not c:
        os._exit(0)
    data += c
head, _, rest = data.partition(b"\n")
kind, tmo, n = head.split()
n = int(n) - len(rest)
buf = [rest]
while n > 0:
    c = os.read(0, min(n, 1 << 20))
    if not c:
        os._exit(0)
    buf.append(c)
    n -= len(c)
if kind == b"session":
    src = b"".join(buf).decode()
    del buf
    exec(compile(src, "<mcpsandbox-session>", "exec"))
    os._exit(0)
try:
    os.write(w, tmo)
    os.close(w)
except OSError:
    pass
nul = os.open("/dev/null", os.O_RDONLY)
os.dup2(nul, 0)
os.close(nul)
src = b"".join(buf).decode("utf-8", "surrogateescape")
del buf
kind = kind.decode()
status = 0
if kind == "python":
    main = new_main()
    wrapper_main, sys.modules["__main__"] = sys.modules["__main__"], main
    g = main.__dict__
    sys.argv = ["-"]
    sys.path = program_path
    try:
        program_env()
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
    ` + exitPy + `
elif kind == "shell":
    b = src.encode("utf-8", "surrogateescape")
    pid = None
    ` + shellByNameLine + `
    if by_name:
        try:
            pid = os.posix_spawn("/bin/sh", [b"sh", b"-c", b, b"script"], dict(os.environ))
        except OSError:
            pid = None
    try:
        if pid is None:
            fd = os.memfd_create("script", 0)
            os.write(fd, b)
            pid = os.posix_spawn("/bin/sh", ["sh", "/proc/self/fd/%d" % fd], dict(os.environ))
        status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if status < 0:
            status = 128 - status
    except OSError as e:
        print("mcpsandbox: cannot run /bin/sh: %s" % e, file=sys.stderr)
        status = 127
else:
    print("mcpsandbox: unknown tool %r" % kind, file=sys.stderr)
    status = 127
if os.getpid() != me:
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(status)
user_path, sys.path = sys.path, safe_path
oom = 0
for p in ("/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"):
    try:
        fd = os.open(p, os.O_RDONLY)
        try:
            lines = os.read(fd, 1 << 16).split(b"\n")
        finally:
            os.close(fd)
        for line in lines:
            k, _, v = line.partition(b" ")
            if k == b"oom_kill":
                oom = int(v)
    except Exception:
        pass
try:
    sys.stdout.flush()
except Exception:
    pass
try:
    sys.stderr.flush()
except Exception:
    pass
try:
    outputs(nonce.encode(), False)
except Exception:
    pass
mark = ("mcpsandbox-end:%s:%d:%d\n" % (nonce, status, oom)).encode()
for fd in (1, 2):
    try:
        os.write(fd, mark)
    except Exception:
        pass
sys.path = user_path
`

// isolateLine keeps the workspace off the wrapper's own imports. Under python3 -c, sys.path[0]
// is "", the working directory, /workspace: every module the wrapper imports after start-up
// (traceback when a program raises, and what that imports in its turn; a text file's locale
// module on some Pythons) would come from there first, so a traceback.py present in the project
// or written by an earlier call replaced serve's error report, and could forge or drop its end
// mark, in every later call. The wrapper imports only with the path Python started with less
// its relative entries ("", or a "." in the image's PYTHONPATH): safe_path; the program alone
// runs with the path as Python made it (program_path), so its own "import mymod" finds
// /workspace/mymod.py as python3 -c in that directory would. The wrapper itself starts with -I -S
// (no working directory, PYTHONPATH or site on its path: programEnvPy builds the program's), as do
// the watchdog and the egress relay; a session's interpreter (sessionPy's REPL) starts as python3 -c.
const isolateLine = `safe_path = [p for p in program_path if p.startswith("/")]`

// newMainPy makes the program's globals a fresh module installed as sys.modules["__main__"],
// as python3 - (a program read from stdin: the wrapper's sys.argv and __file__) has them: its
// globals were a dict of their own while __main__ was the wrapper's module, so pickling a class
// the program defined failed ("attribute lookup C on __main__ failed"), and so did what finds a
// name through sys.modules[obj.__module__] (copy, typing.get_type_hints, multiprocessing's
// pickling of the program's functions, import __main__); __doc__, __spec__, __loader__,
// __package__ and __annotations__ were missing, so builtins' came through (atk48b F3). The
// wrapper keeps its own names in its own module's dict (its code's globals), held by
// wrapper_main. In a session, one such module for the interpreter's life: its names persist.
const newMainPy = `def new_main():
    m = type(sys)("__main__")
    m.__dict__.update(__builtins__=__builtins__, __file__="<stdin>", __cached__=None, __annotations__={}, __loader__=sys.modules["__main__"].__loader__)
    return m`

// exitPy ends a per-call Python program as the interpreter's exit would, before the end mark and
// the exit status: it waits for the program's non-daemon threads (threading._shutdown, which
// first runs threading's own exit hooks: a ThreadPoolExecutor's workers finish their queue and
// end), then runs its atexit handlers (an exception in one is printed and ignored, as at exit).
// Their output and their writes in the workspace were lost, under a successful status (atk48b
// F2). A thread that never ends holds the call to its timeout, as python3 would hold. The wrapper
// registers no atexit handler and starts no thread of its own: what runs is the program's.
const exitPy = `th = sys.modules.get("threading")
    if th is not None:
        try:
            th._shutdown()
        except BaseException as e:
            print("Exception ignored on threading shutdown: %r" % e, file=sys.stderr)
    import atexit
    atexit._run_exitfuncs()`

// userStartPy gives the program back the image's PATH and working directory (the wrapper's
// arguments after SKIPPED: the entrypoint started pid 1, and so the watchdog and the wrapper, in
// / with the PATH's kept directories alone, see entrypoint). The wrapper has started what is its
// own by then (the egress relay); what follows runs the program (in this process, /bin/sh, a
// session's interpreter), which sees the image's PATH and PWD (a launcher's /bin/sh set PWD to /)
// and starts in the workspace as before. What else a launcher python3 changes in its environment
// the program sees, as it did.
const userStartPy = `if len(sys.argv) > 5:
    os.environ["PATH"] = sys.argv[4]
    os.environ["PWD"] = sys.argv[5]
    os.chdir(sys.argv[5])`

// programEnvPy builds, in the per-call wrapper, the Python environment python3 -c would have given
// the program. The wrapper is started as the watchdog is (-I -S: none of the image's PYTHON*
// variables, no site, no working directory on the path), because whatever runs at an interpreter's
// start runs in the process that holds the attached stdin and writes the pid 1 report: with the
// image's PYTHONPATH naming the workspace (ENV PYTHONPATH=/workspace or ".", an editable install's
// .pth), a sitecustomize.py or usercustomize.py a call wrote ran there before the prctl, held a
// session container past serve's death, left the supervisor dumpable and forged the report, and one
// that exited made every later container fail to start (atk47b F1, F2). The program gets that
// environment only after fd 0 is /dev/null, in its own call's process (a session's programs run in
// their own interpreter, started as python3 -c: sessionPy's REPL, never in the supervisor). Made as
// at start-up, in that order: PYTHONPATH's entries before the standard library's, site.main() (the
// site-packages, their .pth files, sitecustomize, usercustomize, as the uid checks and
// PYTHONNOUSERSITE allow), then "" first (-c's working directory, unless PYTHONSAFEPATH); and what
// the image's PYTHONDONTWRITEBYTECODE, PYTHONPYCACHEPREFIX, PYTHONINTMAXSTRDIGITS, PYTHONIOENCODING,
// PYTHONUNBUFFERED (the raw stdout and stderr, write-through), PYTHONWARNINGS and PYTHONFAULTHANDLER
// set. Measured against python3 -c on the test image for each (sys.path, the streams' encoding,
// errors, buffering, sys.warnoptions and the filters, the builtins site adds): the same. What stays
// different (README, Known gaps): sys.flags and sys.orig_argv say -I -S; PYTHONHASHSEED,
// PYTHONOPTIMIZE, PYTHONDEVMODE, PYTHONUTF8, PYTHONHOME, PYTHONPLATLIBDIR, PYTHONBREAKPOINT,
// PYTHONVERBOSE, PYTHONMALLOC and PYTHONTRACEMALLOC take effect at an interpreter's start only and
// are not applied; multiprocessing's spawned children start with the parent's -I -S (they get its
// sys.path, not its sitecustomize).
const programEnvPy = `def program_env():
    e = os.environ
    v = e.get("PYTHONPATH", "")
    sys.path[:0] = [os.path.abspath(p) for p in v.split(":")] if v else []
    sys.dont_write_bytecode = bool(e.get("PYTHONDONTWRITEBYTECODE"))
    if e.get("PYTHONPYCACHEPREFIX"):
        sys.pycache_prefix = os.path.abspath(e["PYTHONPYCACHEPREFIX"])
    if e.get("PYTHONINTMAXSTRDIGITS") and hasattr(sys, "set_int_max_str_digits"):
        try:
            sys.set_int_max_str_digits(int(e["PYTHONINTMAXSTRDIGITS"]))
        except ValueError:
            pass
    enc, _, err = e.get("PYTHONIOENCODING", "").partition(":")
    unbuf = bool(e.get("PYTHONUNBUFFERED"))
    if enc or err or unbuf:
        import io, codecs
        enc = enc and codecs.lookup(enc).name
        for fd, n in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
            f = getattr(sys, n)
            if f is None:
                continue
            fe = (err or enc and "strict" or f.errors) if fd < 2 else f.errors
            if unbuf and fd:
                f.flush()
                raw = io.FileIO(fd, "w", closefd=False)
                raw.name = "<%s>" % n
                f = io.TextIOWrapper(raw, encoding=enc or f.encoding, errors=fe, newline="\n", write_through=True)
                f.mode = "w"
                setattr(sys, n, f)
                setattr(sys, "__%s__" % n, f)
            else:
                f.reconfigure(encoding=enc or f.encoding, errors=fe, write_through=unbuf)
    w = [o for o in e.get("PYTHONWARNINGS", "").split(",") if o]
    if w:
        sys.warnoptions[:0] = w
        if "warnings" in sys.modules:
            sys.modules["warnings"]._processoptions(w)
        else:
            import warnings
    if e.get("PYTHONFAULTHANDLER"):
        import faulthandler
        faulthandler.enable()
    import site
    site.ENABLE_USER_SITE = not e.get("PYTHONNOUSERSITE") and os.getuid() == os.geteuid() and os.getgid() == os.getegid()
    site.main()
    if not e.get("PYTHONSAFEPATH"):
        sys.path.insert(0, "")`

// shellByNameLine decides how the wrapper hands a script to /bin/sh. dash prefixes its errors
// with the script's name: run from a file it is the file's path ("/proc/self/fd/3: 1: curl: not
// found", trial35 F10), so a script the kernel takes as one argument runs as sh -c SCRIPT script
// ("script: 1: curl: not found", $0 = script); one past the kernel's 128 KiB for an argument, or
// holding a NUL, or one the spawn refuses (E2BIG: the environment counts too) runs from a memfd
// as before: the script has no size bound of the kernel's.
const shellByNameLine = `by_name = len(b) < 131072 - 1 and b"\0" not in b`

// wrapperSh is the fallback for images without python3: shell scripts only, same protocol. $2 is
// the PATH's directories the entrypoint kept, where its own commands (head, cat, sleep, rm) are
// found: never the workspace's (a head a call wrote there ran as pid 1); the script gets the
// image's PATH. $3 is what the entrypoint skipped (box.pathNote). $4 is the working directory:
// the wrapper runs in / (see entrypoint), the script in a subshell changed to $4, with OLDPWD
// as the container had it. The stdin watcher reads the
// attached stdin through fd 9: sh gives an asynchronous list /dev/null for its stdin (POSIX, where
// job control is off; dash applies it before the list's own <&0), so its cat read EOF at once and
// its kill -9 -1 came at the start: the timeout's watcher died with it, sometimes the script too,
// and the container no longer ended when serve died.
const wrapperSh = `n=$1 u=$PATH c=$4 v=${OLDPWD-} x=${OLDPWD+1}
PATH=${2:-/usr/bin:/bin}
[ -z "$3" ] || printf 'mcpsandbox-path:%s\n' "$3" >&2
printf 'mcpsandbox-ready:%s\n' "$n" >&2
IFS=' ' read -r k t l || exit 0
f=/tmp/.mcpsandbox-script
head -c "$l" >"$f"
[ -S /run/mcpsandbox-egress/egress.sock ] && echo "mcpsandbox: this image has no python3, which the relay to the hosts docker.network lists needs: they are unreachable (use an image with python3)" >&2
exec 9<&0
( cat <&9 >/dev/null; kill -9 -1 ) &
( sleep $(( t / 1000 + 5 )); kill -9 -1 ) 9<&- &
case $k in
shell) (cd -- "$c" && { if [ -n "$x" ]; then OLDPWD=$v; else unset OLDPWD; fi; PATH=$u exec /bin/sh "$f"; }) </dev/null 9<&-; s=$? ;;
python) echo "mcpsandbox: this image has no python3; use run_shell_sandbox or an image with Python (docker.image)" >&2; s=127 ;;
*) s=127 ;;
esac
rm -f "$f"
o=0
for p in /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control; do
  [ -r "$p" ] && while read -r a b; do [ "$a" = oom_kill ] && o=$b; done <"$p"
done
printf 'mcpsandbox-end:%s:%d:%d\n' "$n" "$s" "$o"
printf 'mcpsandbox-end:%s:%d:%d\n' "$n" "$s" "$o" >&2
`

// entrypoint starts the Python wrapper when the image has python3, else the shell one.
// Its arguments: $1 the nonce, $2 the Python wrapper, $3 the shell one, $4 "pooled" or "cold",
// $5 the watchdog (arguments, not environment: the program's environment stays exactly the policy's).
// The watchdog gets: the wrapper, the nonce, the mode, SKIPPED, the image's PATH and the working
// directory.
//
// The interpreter that becomes pid 1 (the watchdog) and the wrapper is chosen from the image's own
// files, never from a place a call can write. It was the first python3 on the image's PATH
// (command -v), so an image whose PATH named a workspace directory (ENV PATH=/workspace/bin:$PATH,
// or a relative entry: "", ".", "bin" are the working directory, /workspace) ran a python3 a call
// wrote there as pid 1 and as the wrapper: it forged the pid 1 report and held a session container
// past its stream's close (atk48b F1). So the script walks the PATH itself and skips: a relative
// entry; an entry whose physical directory (cd -P: a directory link is followed) lies under any
// mount but the image's root (/proc/self/mountinfo, and /workspace, /tmp and the egress socket's
// directory whatever it says): the workspace, bind or layer, is the one a call writes and that
// outlives it, the others are the scheme's and the engine's; and a python3 that is a link (the
// image's own, in such a directory) to a file that is not one of the image's: the same file (-ef)
// as a python3* that is no link in a kept directory, or failing that one on the root mount
// (/proc/self/fdinfo's mnt_id; gVisor has none: such a link is skipped there). The python3 found
// is started by its path in the physical directory, so Python finds its prefix (and a venv's
// pyvenv.cfg) where it did. What was skipped goes to the wrapper (an argument after the mode; it
// says it before its pid 1 line, box.pathNote) and serve's log says it; the program's own PATH is
// the image's, unchanged. The script runs nothing by name: only sh's builtins (PATH is a name that
// finds nothing while it runs), and the shell wrapper gets the kept directories for its own
// commands. The python3 found may itself be a launcher (pyenv's, asdf's or mise's shims, a
// script that runs python3.11 by name, #!/usr/bin/env python3.11) that finds the interpreter
// again: by the PATH, or from the working directory (a .python-version). Started with the
// image's PATH and the workspace as its working directory, a python3 a call wrote in
// /workspace/bin ran as pid 1 all the same (atk49b F1). So pid 1 starts in / with the kept
// directories alone as its PATH (PWD and OLDPWD as they were): nothing it resolves comes from a
// mount; the watchdog and the wrapper inherit both, and the wrapper gives the image's PATH and
// working directory back to the program only (its arguments after SKIPPED, userStartPy); the
// shell wrapper runs in / too and the script in a subshell that changes to it. /bin/sh itself is
// the image's, by its absolute path. Left (README, Known gaps): a launcher that names a workspace
// directory itself; a link of the image's whose target passes through the workspace and back
// out is checked where it ends, and followed again at the exec; mountinfo writes a blank in a mount's path as \040 (only an
// image's VOLUME can have one: an empty tmpfs). The image's LD_PRELOAD, LD_LIBRARY_PATH and the
// other loader variables act before this script: serve cleans them for the container (loaderEnvOf).
const entrypoint = `p=$PATH w=$PWD v=${OLDPWD-} x=${OLDPWD+1} m='/workspace
/tmp
/run/mcpsandbox-egress
' r= s= n= y=
PATH=/nonexistent/mcpsandbox
[ -r /proc/self/mountinfo ] && while IFS=' ' read -r i _ _ _ t _; do
	if [ "$t" = / ]; then r=$i; else m="$m$t
"; fi
done </proc/self/mountinfo
set -f
IFS=:
for d in $p; do
	case $d in
	/*) cd -P -- "$d" 2>/dev/null || continue ;;
	*) n="$n, \"$d\" (relative)"; continue ;;
	esac
	q=$PWD k=
	IFS='
'
	for t in $m; do case $q/ in "$t"/*) k=$t ;; esac; done
	IFS=:
	if [ -n "$k" ]; then n="$n, $d (under the mount $k)"; else s="$s${s:+:}$q"; fi
done
case $p in *:) n="$n, \"\" (relative)" ;; esac
o() {
	for e in $s; do
		set +f
		for f in "$e"/python3*; do
			if [ ! -L "$f" ] && [ "$f" -ef "$1" ]; then set -f; return 0; fi
		done
		set -f
	done
	i=
	{ while IFS='	 ' read -r a b; do [ "$a" = mnt_id: ] && i=$b; done </proc/self/fdinfo/9; } 2>/dev/null 9<"$1"
	[ -n "$i" ] && [ "$i" = "$r" ]
}
for q in $s; do
	c=$q/python3
	[ -f "$c" ] && [ -x "$c" ] || continue
	if [ -L "$c" ] && ! o "$c"; then n="$n, $c (a link to a file that is not the image's)"; continue; fi
	y=$c
	break
done
unset IFS
set +f
cd / || exit 1
PWD=$w
if [ -n "$x" ]; then OLDPWD=$v; else unset OLDPWD; fi
PATH=$p
n=${n#, }
[ -n "$y" ] && PATH=$s exec "$y" -I -S -c "$5" "$2" "$1" "$4" "$n" "$p" "$w"
exec /bin/sh -c "$3" sh "$1" "$s" "$n" "$w"
`

// watchdogPy is the container's first process (pid 1 of its pid namespace: no docker-init, see
// build) and the wrapper's parent: it spawns the wrapper (python3 -I -S -c wrapperPy NONCE MODE SKIPPED PATH CWD REACH, SKIPPED the entrypoint's note:
// nothing of the image's Python environment runs in it, programEnvPy), which writes the call's timeout on fd 3 once it has read its program.
// From then on, when the attached stdin reads EOF (serve closed the call, or died, even by
// SIGKILL, and the engine closed the stream) or the call outlives its timeout by 5 s, it kills
// every process it can and exits; when the wrapper exits, it exits with its status (128+N for
// signal N). A session's supervisor closes fd 3 unwritten (the attached stdin carries the
// session's next calls): the watchdog then keeps no timeout and waits for the stdin's hang-up
// alone (poll with no event asked: data never wakes it), which the supervisor also watches.
// As pid 1 it is out of the program's reach: the kernel delivers to a pid namespace's init only
// the signals it has a handler for (SIGCHLD here; Python's SIGINT handler is set to ignore, and
// the wrapper gets the default back: atk44c F3), so the program (same uid) can neither kill nor
// stop it (atk39b F8: as docker-init's child it was SIGSTOPped, and a SIGKILLed serve's container
// ran on past its timeout); when it exits, the kernel kills everything in the namespace. As pid 1
// it also reaps every orphan, which docker-init did. gVisor (runsc) delivers SIGSTOP to a
// namespace's first process all the same: there it stays stoppable (README, Known gaps).
//
// Nor can the program reach it through /proc (atk44c F1): a dumpable process of the program's uid
// lets it open /proc/1/fd/0 for writing (a pipe's new write end: the hang-up never comes, and a
// SIGKILLed serve's session container ran on) and /proc/1/mem read-write. So the watchdog makes
// itself non-dumpable: a non-dumpable process's /proc files (fd, mem, environ) need CAP_SYS_PTRACE,
// which no container has, whatever its uid. Where the image's Python has ctypes (the official
// python images) it calls prctl(PR_SET_DUMPABLE, 0), and the wrapper, spawned dumpable (exec
// resets it), does the same as its first act, with ctypes imported from the standard library's
// directory only. Else the watchdog runs itself again from a
// copy of its interpreter in a memfd the program's uid may execute but not read: the kernel makes a
// process that runs a file it cannot read non-dumpable. The wrapper is spawned from the same copy,
// so a session's supervisor, which reads the attached stdin, is out of reach too (the program runs
// in its children, or in the per-call wrapper after fd 0 is /dev/null). argv[0] stays the
// interpreter's path, where Python finds its library. The copy costs the interpreter's size in the
// container's memory (6.8 MB for Debian's python3) and one more interpreter start. It is not made
// where it cannot work: under gVisor, which refuses to run a file it cannot read; for an interpreter
// that finds its libraries by its own place ($ORIGIN: the copy has none, and the loader found
// another libpython or none, atk45c F1); under a memory limit with no room for it beside the
// interpreters (at limits.memory = 16MiB every session call was killed, atk45c F3).
// Whichever way, the wrapper measures the result before the program runs: a child of its uid tries
// pid 1's and its own /proc/N/fd/0 for writing (gVisor lets it though pid 1 used prctl), and says
// so on its first line ("mcpsandbox-pid1:prctl|copy|reachable (why)"); serve logs a reachable pid 1
// once and --check's init layer says it (notePid1, pid1Layer; README, Known gaps).
const watchdogPy = `import os, sys, select, signal, time
exe = sys.executable
reach = "reachable"
if sys.argv[1:2] == ["--unreachable"]:
    os.dup2(int(sys.argv[2]), 99, inheritable=False)
    os.close(int(sys.argv[2]))
    exe = "/proc/self/fd/99"
    reach = "copy"
    del sys.argv[1:3]
else:
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
        if prctl(4, 0, 0, 0, 0) == 0 and prctl(3, 0, 0, 0, 0) == 0:
            reach = "prctl"
    except Exception as e:
        why = "no ctypes" if isinstance(e, ImportError) else "prctl failed"
    else:
        why = "prctl failed"
if reach == "reachable":
    r = m = src = -1
    try:
        a = open("/proc/self/cmdline", "rb").read().split(b"\0")
        room = 1 << 62
        for p in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
            try:
                room = int(open(p).read())
                break
            except (OSError, ValueError):
                pass
        src = os.open(sys.executable, os.O_RDONLY | os.O_CLOEXEC)
        if os.fstat(src).st_size + (24 << 20) > room:
            raise OSError("no room for the copy")
        m = os.memfd_create("mcpsandbox-watchdog")
        tail = b""
        while True:
            c = os.read(src, 1 << 20)
            if not c:
                break
            if b"$ORIGIN" in tail + c:
                raise OSError("the interpreter finds its libraries by its own place")
            tail = c[-8:]
            while c:
                c = c[os.write(m, c):]
        os.close(src)
        src = -1
        r = os.open("/proc/self/fd/%d" % m, os.O_RDONLY)
        os.close(m)
        m = -1
        os.fchmod(r, 0o100)
        os.set_inheritable(r, True)
        os.execv("/proc/self/fd/%d" % r, [sys.executable, "-I", "-S", "-c", a[a.index(b"-c") + 1], "--unreachable", str(r)] + sys.argv[1:])
    except Exception as e:
        why += "; no copy: " + str(e)[:80]
        for fd in (r, m, src):
            if fd >= 0:
                os.close(fd)
    reach = "reachable (%s)" % why
sr, sw = os.pipe()
os.set_blocking(sw, False)
signal.set_wakeup_fd(sw)
signal.signal(signal.SIGCHLD, lambda s, f: None)
signal.signal(signal.SIGINT, signal.SIG_IGN)
r, w = os.pipe()
pid = os.posix_spawn(exe, [sys.executable, "-I", "-S"] + sys.argv + [reach], dict(os.environ), file_actions=[(os.POSIX_SPAWN_DUP2, w, 3)], setsigdef=[signal.SIGINT])
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
`

// spec is the container every call gets, cold or pooled: built from the policy alone, so the
// model can loosen nothing.
type spec struct {
	image     string
	network   string
	user      string
	readOnly  bool
	runtime   string
	workspace string
	wsWrite   bool
	memory    int64
	pids      int64
	nanoCPUs  int64
	policy    string // policy hash, for the label
	// egress says the policy lists hosts (docker.network): each container gets a socket
	// directory of its own, egressDir, set on the container's copy of the spec (never on the
	// executor's: a shared directory would be a shared proxy) and mounted read-only at
	// egressMount. See egress.go.
	egress      bool
	egressDir   string
	egressHosts string
	// layerOpts is a box's workspace layer's overlay options (wsmount.go), set on the box's copy
	// of the spec like egressDir; "" = the plain bind mount. userWhy says why user is not the policy's.
	layerOpts string
	userWhy   string
	// rro says a read-only bind asks the engine for recursive read-only (API 1.44+, set by the
	// probe; the executor's rroOff can take it back): else it binds non-recursively (bindOptions).
	rro bool
	// imageVolumes are the directories the image declares as VOLUME, set by the probe before
	// any container is built for a call: each gets a size-capped tmpfs (imageVolumeMounts).
	imageVolumes []string
	// loaderEnv are the image's loader variables that named a place a call can write, as the
	// containers get them (loaderEnvOf), set by the probe with imageVolumes.
	loaderEnv []string
	// gvisor says the runtime (docker.runtime, or the engine's default) is gVisor's runsc,
	// and gvisorSeccomp whether the engine starts it with --oci-seccomp; set by the probe
	// from the engine's runtimes (runtimeOf), before any container is built for a call.
	gvisor        bool
	gvisorSeccomp bool
	// reachableWrapper spawns the wrapper dumpable, as under gVisor (watchdogPy): for tests only,
	// which play a program that takes over a session's supervisor to attack serve's side.
	reachableWrapper bool
}

// Under gVisor (runsc) the pids limit is the host cgroup's, and what it counts is the
// Sentry's host tasks, not the program's processes: gVisor 20221219 does not count those
// itself. Measured here (ptrace platform): an idle sandbox holds ~58 host tasks and each
// process of the program ~10-12 more (its own stub address space and threads; a thread
// costs ~0.1). When the host limit is reached the Sentry cannot start a thread and the whole
// sandbox dies (exit 2, the Go runtime's fatal error): with limits.pids = 64 taken as host
// tasks, a script that ran two commands killed its own call. So under gVisor the host limit
// is gvisorBaseTasks + gvisorTasksPerProcess × limits.pids, which lets the program run about
// limits.pids processes and still bounds a fork bomb (it ends the sandbox instead).
const (
	gvisorBaseTasks       = 128
	gvisorTasksPerProcess = 16
)

// hostPids is the pids limit the engine is given for a policy's limits.pids.
func (s spec) hostPids() int64 {
	if s.gvisor {
		return gvisorBaseTasks + gvisorTasksPerProcess*s.pids
	}
	return s.pids
}

// readonlyPaths is the engine's default list (HostConfig.ReadonlyPaths replaces it, so it is
// repeated here) plus /sys/fs/cgroup: crun 1.8 mounts the tmpfs holding the cgroup v1
// hierarchies read-write (drwxrwxrwt) even with a read-only root and /sys read-only, so a
// program could write there; runc mounts it read-only, gVisor denies it.
var readonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", cgroupDir}

const cgroupDir = "/sys/fs/cgroup"

// isGVisor says whether a runtime registered in the engine under name, with this path, is
// gVisor's runsc (the name is the operator's choice in daemon.json; the binary is not).
func isGVisor(name, path string) bool {
	base := filepath.Base(path)
	return name == "runsc" || strings.HasPrefix(name, "io.containerd.runsc") || base == "runsc" || strings.HasPrefix(base, "runsc-")
}

// hostUDSOpen says whether runsc's arguments let the program connect to a host unix socket
// (serve's egress proxy, docker.network host lists): by default (--host-uds=none) gVisor
// refuses it with EPERM, and every request through the proxy failed.
func hostUDSOpen(args []string) bool {
	for i, a := range args {
		a = strings.TrimLeft(a, "-")
		v, ok := strings.CutPrefix(a, "host-uds=")
		if !ok && a == "host-uds" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok && (v == "open" || v == "all") || a == "fsgofer-host-uds" || a == "fsgofer-host-uds=true" {
			return true
		}
	}
	return false
}

// hasOCISeccomp says whether runsc's arguments make it apply the container's seccomp profile
// to the program (off by default: gVisor filters only its own host syscalls).
func hasOCISeccomp(args []string) bool {
	for _, a := range args {
		if a == "--oci-seccomp" || a == "-oci-seccomp" || a == "--oci-seccomp=true" || a == "-oci-seccomp=true" {
			return true
		}
	}
	return false
}

func newSpec(p *policy.Policy) spec {
	s := spec{
		image: dksec.Of(p).Image, network: dksec.Of(p).NetworkName(), user: dksec.Of(p).User, readOnly: dksec.Of(p).ReadOnly,
		runtime: dksec.Of(p).Runtime, workspace: dksec.Of(p).Workspace, wsWrite: dksec.Of(p).WorkspaceWritable,
		memory: int64(p.Limits.Memory), pids: int64(p.Limits.Pids), nanoCPUs: int64(p.Limits.CPUs * 1e9),
		policy: p.Hash()[:16],
	}
	if s.network == "" {
		s.network = "none"
	}
	if s.user == "" {
		s.user = defaultUser
	}
	return s
}

// build returns the container's configuration. labels are the instance's plus the call's;
// pooled says the container waits in the pool (see wrapperPy: only the start-up differs).
func (s spec) build(nonce string, labels map[string]string, pooled bool) (*container.Config, *container.HostConfig) {
	mode := "cold"
	if pooled {
		mode = "pooled"
	}
	cfg := &container.Config{
		Image:    s.image,
		Hostname: boxHostname,
		User:     s.user,
		// No host environment: only these, plus what the image itself sets.
		Env: []string{
			"LANG=C.UTF-8", "HOME=/tmp", "PYTHONDONTWRITEBYTECODE=1",
		},
		Entrypoint:      []string{"/bin/sh", "-c", entrypoint, "mcpsandbox"},
		Cmd:             []string{nonce, wrapper(), wrapperSh, mode, mainPy(s.reachableWrapper)},
		WorkingDir:      "/tmp",
		AttachStdin:     true,
		AttachStdout:    true,
		AttachStderr:    true,
		OpenStdin:       true,
		StdinOnce:       true,
		NetworkDisabled: s.network == "none",
		Labels:          labels,
	}
	// No docker-init: the watchdog is pid 1 itself, where nothing in the container can stop it
	// (watchdogPy). Set, not left nil: an engine's daemon.json can make init the default.
	init := mutated("docker-watchdog-init")
	pids := s.hostPids()
	hc := &container.HostConfig{
		NetworkMode:    container.NetworkMode(s.network),
		ReadonlyRootfs: s.readOnly,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges", seccompOpt()}, // serve's seccomp profile (seccomp.go), never unconfined
		Init:           &init,
		Runtime:        s.runtime,
		IpcMode:        container.IPCModePrivate,
		ShmSize:        shmBytes,
		Tmpfs:          map[string]string{"/tmp": "rw,nosuid,nodev,size=" + strconv.Itoa(tmpfsBytes)},
		LogConfig:      container.LogConfig{Type: "none"}, // output goes to serve over attach, never to the engine's disk
		ReadonlyPaths:  append([]string(nil), readonlyPaths...),
		Resources: container.Resources{
			Memory:     s.memory,
			MemorySwap: s.memory, // memory+swap = memory: no swap
			NanoCPUs:   s.nanoCPUs,
			PidsLimit:  &pids,
			Ulimits: []*units.Ulimit{
				{Name: "nofile", Soft: nofileLimit, Hard: nofileLimit},
				{Name: "fsize", Soft: fsizeBytes, Hard: fsizeBytes},
			},
		},
	}
	if s.workspace != "" {
		hc.Mounts = []mount.Mount{s.workspaceMount(labels)}
		cfg.WorkingDir = workspaceDir
	}
	s.imageVolumeMounts(hc.Tmpfs)
	// The image's own values would act in pid 1's loader, before the entrypoint (loaderEnvOf).
	if !mutated("docker-loader-env") {
		cfg.Env = append(cfg.Env, s.loaderEnv...)
	}
	if s.egress && s.egressDir != "" {
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: s.egressDir, Target: egressMount, ReadOnly: true, BindOptions: s.roBind()})
		cfg.Env = append(cfg.Env, egressEnv()...)
	}
	return mutateBuild(cfg, hc)
}

// imageVolumeMounts gives each directory the image declares as VOLUME a tmpfs like /tmp's. The
// engine would make it an anonymous volume on its own disk, writable whatever docker.read_only
// says and bounded by nothing but that disk (a call filled 240 MB of it with four files under
// the fsize limit). The tmpfs, like /tmp's, counts against limits.memory. /tmp itself, and a
// directory serve mounts (the workspace, the egress socket's), keep their own mount.
func (s spec) imageVolumeMounts(tmpfs map[string]string) {
	for _, v := range s.imageVolumes {
		v = path.Clean(v)
		if v == "/tmp" || v == workspaceDir && s.workspace != "" || v == egressMount && s.egress || mutated("atk19b-docker-image-volumes") {
			continue
		}
		tmpfs[v] = "rw,nosuid,nodev,size=" + strconv.Itoa(tmpfsBytes)
	}
}

func (s spec) describeUser() string {
	if dksec.RootUser(s.user) {
		return fmt.Sprintf("%s (root inside the container: set docker.user = %q)", s.user, defaultUser)
	}
	return s.user + s.userWhy
}

// wrapper is wrapperPy (a mutant build's docker-wrapper-program-env-off gives the program the
// wrapper's isolated environment: no PYTHONPATH, no site-packages).
func wrapper() string {
	if mutated("docker-wrapper-program-env-off") {
		return strings.Replace(wrapperPy, "        program_env()\n", "", 1)
	}
	return programMutants(wrapperPy)
}

// programMutants is a wrapper's code (wrapperPy, or sessionPy's REPL) as a mutant build switches
// off how its Python program ends and what its globals are: docker-program-exit-skipped writes
// the end mark as soon as the program's code returns (no wait for its threads, no atexit
// handlers: atk48b F2), docker-program-main-dict runs it in a dict of its own while __main__ is
// the wrapper's module (atk48b F3).
func programMutants(src string) string {
	if mutated("docker-program-exit-skipped") {
		src = strings.NewReplacer("    "+exitPy+"\n", "", "    end_call()\n", "").Replace(src)
	}
	if mutated("docker-program-main-dict") {
		src = strings.NewReplacer(
			"    wrapper_main, sys.modules[\"__main__\"] = sys.modules[\"__main__\"], main\n    g = main.__dict__\n", "    g = {\"__builtins__\": __builtins__, \"__name__\": \"__main__\", \"__file__\": \"<stdin>\"}\n",
			"\nwrapper_main, sys.modules[\"__main__\"] = sys.modules[\"__main__\"], main\ng = main.__dict__\n", "\ng = {\"__builtins__\": __builtins__, \"__name__\": \"__main__\", \"__file__\": \"<stdin>\"}\n").Replace(src)
	}
	return src
}

// prctlIf is the watchdog's line that makes itself non-dumpable through ctypes (for its mutants).
const prctlIf = "        if prctl(4, 0, 0, 0, 0) == 0 and prctl(3, 0, 0, 0, 0) == 0:"

// mainPy is the container's main process: watchdogPy (a mutant build's docker-watchdog-main only
// waits for the wrapper: nothing the program cannot reach holds the attached stdin or the timeout;
// docker-watchdog-session-blind leaves a session's stdin to its supervisor alone;
// docker-watchdog-dumpable stays dumpable, docker-watchdog-wrapper-dumpable spawns a dumpable wrapper,
// docker-wrapper-site spawns it without -I -S: the image's PYTHONPATH and site run before its prctl).
func mainPy(reachableWrapper bool) string {
	if mutated("docker-watchdog-main") {
		return `import os, sys
pid = os.posix_spawn(sys.executable, [sys.executable] + sys.argv, dict(os.environ))
st = os.waitpid(pid, 0)[1]
os._exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st))
`
	}
	if mutated("docker-watchdog-sigint") {
		return strings.Replace(watchdogPy, "signal.signal(signal.SIGINT, signal.SIG_IGN)\n", "", 1)
	}
	if mutated("docker-watchdog-dumpable") {
		return strings.NewReplacer("    r = m = src = -1\n    try:\n", "    r = m = src = -1\n    try:\n        raise OSError\n", prctlIf, "        if False:").Replace(watchdogPy)
	}
	if mutated("docker-watchdog-prctl-off") {
		return strings.Replace(watchdogPy, prctlIf, "        if False:", 1)
	}
	if mutated("docker-watchdog-copy-no-room") {
		return strings.Replace(watchdogPy, "if os.fstat(src).st_size + (24 << 20) > room:", "if False:", 1)
	}
	if mutated("docker-watchdog-wrapper-dumpable") || reachableWrapper {
		return strings.Replace(watchdogPy, `pid = os.posix_spawn(exe, [sys.executable, "-I", "-S"] + sys.argv + [reach],`, `pid = os.posix_spawn(sys.executable, [sys.executable, "-I", "-S"] + sys.argv + ["reachable (spawned so)"],`, 1)
	}
	if mutated("docker-wrapper-site") {
		return strings.Replace(watchdogPy, `[sys.executable, "-I", "-S"] + sys.argv + [reach]`, "[sys.executable] + sys.argv + [reach]", 1)
	}
	if mutated("docker-watchdog-session-blind") {
		return strings.Replace(watchdogPy, "po.register(0, 0)", "pass", 1)
	}
	return watchdogPy
}
