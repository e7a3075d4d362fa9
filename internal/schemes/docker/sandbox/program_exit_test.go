package sandbox

import (
	"strings"
	"testing"
)

// exitProg starts a non-daemon thread and registers atexit handlers (one raises), then ends with
// status 3: python3 prints main-done, thread-done, atexit-2, the ignored exception, atexit-1, and
// exits 3. (The test image has no concurrent.futures: a ThreadPoolExecutor's end is not tried.)
const exitProg = `import atexit, sys, threading, time
def late():
    time.sleep(0.4)
    print("thread-done", flush=True)
threading.Thread(target=late).start()
atexit.register(print, "atexit-1")
@atexit.register
def boom():
    raise ValueError("from a handler")
atexit.register(print, "atexit-2")
print("main-done", flush=True)
sys.exit(3)
`

const exitWant = "main-done\nthread-done\natexit-2\natexit-1\n"

// A Python program's non-daemon threads and atexit handlers did not run before the end mark:
// its output after its main code (and what they wrote) was lost under a successful status (atk48b
// F2). They run now, as at an interpreter's exit, per call and in a session; in a session a call's
// handlers run at its own end only, and the standard library's exit hooks stay for the
// interpreter's end: weakref's finalizers, and a log file logging opened, still work in the calls
// after one that used them.
func TestProgramEndsAsInterpreterExit(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	res := mustCall(t, e, ToolPython, py(exitProg))
	if res.Stdout != exitWant || res.ExitCode != 3 || !strings.Contains(res.Stderr, "ValueError: from a handler") {
		t.Fatalf("per call: stdout %q exit %d stderr %q, want stdout %q exit 3 and the handler's exception", res.Stdout, res.ExitCode, res.Stderr, exitWant)
	}

	se := newExec(t, eng, sessionPolicy())
	res = mustIn(t, se, "A", ToolPython, py(exitProg+"\n"))
	if res.Stdout != exitWant || res.ExitCode != 3 || !strings.Contains(res.Stderr, "ValueError: from a handler") {
		t.Fatalf("session: stdout %q exit %d stderr %q, want stdout %q exit 3 and the handler's exception", res.Stdout, res.ExitCode, res.Stderr, exitWant)
	}
	const keep = "import weakref, atexit, logging\nclass O: pass\nkept = O()\nweakref.finalize(kept, print, 'never')\n" +
		"logging.basicConfig(filename='/tmp/s.log', filemode='w', format='%(message)s', level=logging.INFO)\nlogging.info('one')\natexit.register(print, 'once')\n"
	if res = mustIn(t, se, "A", ToolPython, py(keep)); res.Stdout != "once\n" || res.ExitCode != 0 {
		t.Fatalf("session, a call that keeps a finalizer and a log file: stdout %q exit %d stderr %q, want %q", res.Stdout, res.ExitCode, res.Stderr, "once\n")
	}
	const later = "o = O()\nweakref.finalize(o, print, 'finalized')\ndel o\nlogging.info('two')\nprint(open('/tmp/s.log').read(), end='')\n"
	if res = mustIn(t, se, "A", ToolPython, py(later)); res.Stdout != "finalized\none\ntwo\n" || res.ExitCode != 0 {
		t.Fatalf("session, the call after: stdout %q exit %d stderr %q, want %q (no handler of an earlier call; finalizers and the log still work)", res.Stdout, res.ExitCode, res.Stderr, "finalized\none\ntwo\n")
	}
}

// mainProg says what python3 - says of its __main__: the globals are sys.modules["__main__"]'s,
// a class it defines pickles, and the module's attributes are a fresh module's.
const mainProg = `import pickle, sys, __main__
class C: pass
print(type(pickle.loads(pickle.dumps(C()))).__name__, __main__.__dict__ is globals(), sys.modules["__main__"] is __main__)
print(__spec__, __doc__, __package__, __loader__.__name__, __annotations__, __file__, __cached__, __name__)
`

const mainWant = "C True True\nNone None None BuiltinImporter {} <stdin> None __main__\n"

// A Python program's globals were a dict of their own while __main__ was the wrapper's module:
// pickling a class it defined failed, and __spec__, __doc__, __package__, __loader__ and
// __annotations__ were builtins' (atk48b F3). The program runs in a fresh __main__ module now, as
// python3 - has it, per call and in a session, where it persists between calls.
func TestProgramGlobalsAreMain(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	if res := mustCall(t, e, ToolPython, py(mainProg)); res.Stdout != mainWant || res.ExitCode != 0 {
		t.Fatalf("per call: stdout %q exit %d stderr %q, want %q", res.Stdout, res.ExitCode, res.Stderr, mainWant)
	}
	se := newExec(t, eng, sessionPolicy())
	if res := mustIn(t, se, "A", ToolPython, py(mainProg+"x = 41\n")); res.Stdout != mainWant || res.ExitCode != 0 {
		t.Fatalf("session: stdout %q exit %d stderr %q, want %q", res.Stdout, res.ExitCode, res.Stderr, mainWant)
	}
	const next = "print(x + 1, type(pickle.loads(pickle.dumps(C()))).__name__, sys.modules['__main__'].x)\n"
	if res := mustIn(t, se, "A", ToolPython, py(next)); res.Stdout != "42 C 41\n" || res.ExitCode != 0 {
		t.Fatalf("session, the next call: stdout %q exit %d stderr %q, want %q", res.Stdout, res.ExitCode, res.Stderr, "42 C 41\n")
	}
}
