# What a python program (run_python_sandbox, per call: it runs in the wrapper's own process)
# can do with its own /proc entries and its children's.
import os, sys, subprocess
def t(name, f):
    try:
        r = f()
        print("%-34s ok %s" % (name, repr(r)[:60]))
    except Exception as e:
        print("%-34s FAIL %s: %s" % (name, type(e).__name__, e))
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    t("prctl(PR_GET_DUMPABLE)", lambda: libc.prctl(3, 0, 0, 0, 0))
except ImportError:
    pass
t("readlink /proc/self/exe", lambda: os.readlink("/proc/self/exe"))
t("read /proc/self/environ", lambda: len(open("/proc/self/environ", "rb").read()))
t("read /proc/self/auxv", lambda: len(open("/proc/self/auxv", "rb").read()))
t("read /proc/self/io", lambda: open("/proc/self/io").read().split()[:2])
t("read /proc/self/maps", lambda: len(open("/proc/self/maps").read()))
t("listdir /proc/self/fd", lambda: sorted(os.listdir("/proc/self/fd")))
t("listdir /proc/self/fdinfo", lambda: sorted(os.listdir("/proc/self/fdinfo")))
t("write /proc/self/comm", lambda: open("/proc/self/comm", "w").write("mine"))
t("write /proc/self/oom_score_adj", lambda: open("/proc/self/oom_score_adj", "w").write("500"))
t("stat /proc/self/environ owner", lambda: os.stat("/proc/self/environ").st_uid)
t("open /proc/self/exe (read)", lambda: os.open("/proc/self/exe", os.O_RDONLY))
def chmod_then_write():
    os.chmod("/proc/self/exe", 0o777)
    st = oct(os.stat("/proc/self/exe").st_mode)
    try:
        fd = os.open("/proc/self/exe", os.O_RDWR)
    except OSError as e:
        return "chmod done (%s); open O_RDWR: %s" % (st, e)
    return "chmod done (%s); O_RDWR fd %d" % (st, fd)
t("chmod+write /proc/self/exe", chmod_then_write)
t("subprocess cat /proc/self/environ", lambda: subprocess.run(["sh", "-c", "wc -c </proc/self/environ"], capture_output=True, text=True).stdout.strip())
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.read(r, 1)
    os._exit(0)
t("parent reads forked child's environ", lambda: len(open("/proc/%d/environ" % pid, "rb").read()))
t("parent lists forked child's fd", lambda: len(os.listdir("/proc/%d/fd" % pid)))
os.write(w, b"x"); os.waitpid(pid, 0)
try:
    import multiprocessing
    def sq(x):
        return x * x
    t("multiprocessing.Pool(2).map", lambda: multiprocessing.get_context("fork").Pool(2).map(sq, range(4)))
    t("multiprocessing spawn ctx", lambda: multiprocessing.get_context("spawn").Pool(1).map(abs, [-3]))
except ImportError:
    pass
try:
    import psutil
except ImportError:
    pass
sys.stdout.flush()
