"""atk48b: hostile stdio lines around initialize and params. argv: BIN POLICY [raceonly]
Each case is sent on its own serve (fresh), the lines it writes on stdout within a time are
printed; a case that expects an answer and gets none is flagged NOANSWER. Non-JSON stdout is
flagged STRAY."""
import sys, os, json, subprocess, select, time
BIN, POL = sys.argv[1:3]
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "atk48b", "version": "1"}}}
INITED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

class Serve:
    def __init__(self):
        self.p = subprocess.Popen([BIN, "serve", "--policy", POL], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open("/tmp/atk48b/w/serve.err", "ab"))
        self.buf = b""
    def send(self, b):
        if isinstance(b, (dict, list)):
            b = json.dumps(b).encode()
        self.p.stdin.write(b + b"\n"); self.p.stdin.flush()
    def lines(self, wait, want=None):
        out, end = [], time.time() + wait
        while time.time() < end:
            r, _, _ = select.select([self.p.stdout], [], [], max(0, end - time.time()))
            if not r: break
            c = os.read(self.p.stdout.fileno(), 1 << 20)
            if not c:
                out.append(b"<EOF>"); break
            self.buf += c
            while b"\n" in self.buf:
                l, _, self.buf = self.buf.partition(b"\n")
                out.append(l)
            if want is not None and len(out) >= want: break
        return out
    def close(self):
        self.p.stdin.close()
        try: self.p.wait(10)
        except subprocess.TimeoutExpired: self.p.kill(); self.p.wait()
        return self.p.returncode

def show(name, lines):
    for l in lines:
        tag = ""
        if l != b"<EOF>":
            try: json.loads(l)
            except Exception: tag = "STRAY "
        print("   %s%s" % (tag, l[:400].decode("utf-8", "replace")))
    if not lines: print("   (nothing)")

def case(name, msgs, init=True, wait=3.0):
    s = Serve()
    if init:
        s.send(INIT); s.lines(10, 1); s.send(INITED)
    print("## %s%s" % (name, "" if init else " (before initialize)"))
    for m in msgs:
        print("  > %s" % (m if isinstance(m, bytes) else json.dumps(m))[:200])
        s.send(m)
    show(name, s.lines(wait))
    # is serve still usable afterwards?
    s.send({"jsonrpc": "2.0", "id": 777, "method": "ping"})
    after = s.lines(5, 1)
    ok = any(b'"id":777' in l for l in after)
    print("  after: ping 777 %s" % ("answered" if ok else "NOT answered: %r" % after[:3]))
    print("  exit:", s.close())

R = lambda id_, method="ping", **kw: dict({"jsonrpc": "2.0", "id": id_, "method": method}, **kw)
raw = lambda s: s.encode() if isinstance(s, str) else s
if __name__ == "__main__":
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    if only in ("", "ids"):
        for idw in ['1', '"a"', '1.5', '-0', '1e400', '12345678901234567890', 'true', '{}', '[]', '""', '-1', '0.0']:
            case("id " + idw, [raw('{"jsonrpc":"2.0","id":%s,"method":"ping"}' % idw)], wait=2)
    if only in ("", "params"):
        for m in ("ping", "tools/list", "tools/call", "initialize", "resources/list", "nosuch/method"):
            for pw in ('5', '[]', '"x"', 'true', '[{"name":"a"}]'):
                case("params %s of %s" % (pw, m), [raw('{"jsonrpc":"2.0","id":5,"method":"%s","params":%s}' % (m, pw))], wait=2)
    if only in ("", "preinit"):
        for pw in ('5', '[]', 'null', '{}'):
            case("initialize params " + pw, [raw('{"jsonrpc":"2.0","id":1,"method":"initialize","params":%s}' % pw), INITED, R(2, "tools/list")], init=False)
        case("tools/list before initialize", [R(3, "tools/list")], init=False)
        case("initialize twice", [INIT, R(4, "tools/list")])
    if only in ("", "odd"):
        case("batch", [raw('[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":9,"method":"ping"}]')])
        case("empty batch", [raw('[]')])
        case("not JSON", [raw('hello')])
        case("empty line + spaces", [raw(''), raw('   ')])
        case("jsonrpc 1.0", [raw('{"jsonrpc":"1.0","id":11,"method":"ping"}')])
        case("no jsonrpc", [raw('{"id":12,"method":"ping"}')])
        case("method number", [raw('{"jsonrpc":"2.0","id":13,"method":5}')])
        case("unsolicited response", [raw('{"jsonrpc":"2.0","id":14,"result":{}}')])
        case("deep params", [raw('{"jsonrpc":"2.0","id":15,"method":"ping","params":{"a":' + '[' * 100000 + ']' * 100000 + '}}')])
        case("BOM", [b'\xef\xbb\xbf{"jsonrpc":"2.0","id":16,"method":"ping"}'])
        case("tools/call name number", [R(17, "tools/call", params={"name": 5, "arguments": {}})])
        case("tools/call arguments array", [R(18, "tools/call", params={"name": "run_shell_sandbox", "arguments": []})])
        case("tools/call arguments string", [R(19, "tools/call", params={"name": "run_shell_sandbox", "arguments": "x"})])
        case("tools/call _meta number", [R(20, "tools/call", params={"name": "run_shell_sandbox", "arguments": {"script": "echo hi"}, "_meta": 5})], wait=15)
        case("two lines in one write, second invalid", [b'{"jsonrpc":"2.0","id":21,"method":"ping"}\n{"jsonrpc":"2.0","id":22,"method":"ping","params":7}'])
        case("NUL byte in line", [b'{"jsonrpc":"2.0","id":23,"method":"ping"}\x00'])
