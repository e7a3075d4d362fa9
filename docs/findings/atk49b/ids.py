"""atk49b: many hostile lines on ONE stdio serve; after each case a ping with a marker id;
prints every line serve wrote between. argv: BIN POLICY"""
import sys, os, json, subprocess, select, time
BIN, POL = sys.argv[1:3]
p = subprocess.Popen([BIN, "serve", "--policy", POL], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open("/tmp/atk49b/w/serve.err", "ab"))
buf = b""
def send(b):
    p.stdin.write(b + b"\n"); p.stdin.flush()
def until(marker, wait=5):
    global buf
    out, end = [], time.time() + wait
    while time.time() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0, end - time.time()))
        if not r: break
        c = os.read(p.stdout.fileno(), 1 << 20)
        if not c: out.append(b"<EOF>"); break
        buf += c
        while b"\n" in buf:
            l, _, buf = buf.partition(b"\n")
            if marker in l: return out, True
            out.append(l)
    return out, False
send(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}')
print(until(b'"id":0,')[0] if False else "init", until(b'protocolVersion')[1])
send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
cases = [l.rstrip(b"\n") for l in open(sys.argv[3], "rb") if l.strip() and not l.startswith(b"#")]
for i, c in enumerate(cases):
    send(c)
    m = ('"mark-%d"' % i).encode()
    send(b'{"jsonrpc":"2.0","id":' + m + b',"method":"ping"}')
    out, ok = until(m)
    print("> %s" % c[:300].decode("utf-8", "backslashreplace"))
    for l in out:
        tag = ""
        try: json.loads(l)
        except Exception: tag = "STRAY "
        print("   %s%s" % (tag, l[:300].decode("utf-8", "backslashreplace")))
    if not out: print("   (nothing)")
    if not ok: print("   MARK NOT ANSWERED")
p.stdin.close()
try: print("exit", p.wait(10))
except subprocess.TimeoutExpired: p.kill(); print("KILLED")
