"""atk49b: two tools/calls in flight whose ids differ as written but decode the same (lone surrogates),
and (control) two distinct ids. stdio. argv: BIN POLICY IDA IDB"""
import sys, os, json, subprocess, select, time
BIN, POL, A, B = sys.argv[1:5]
p = subprocess.Popen([BIN, "serve", "--policy", POL], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open("/tmp/atk49b/w/dup.err", "ab"))
def send(b): p.stdin.write(b + b"\n"); p.stdin.flush()
t0 = time.time()
def lines(wait):
    buf, out, end = b"", [], time.time() + wait
    while time.time() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0, end - time.time()))
        if not r: break
        c = os.read(p.stdout.fileno(), 1 << 20)
        if not c: break
        buf += c
        while b"\n" in buf:
            l, _, buf = buf.partition(b"\n"); out.append((round(time.time() - t0, 2), l))
    return out
send(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}')
lines(3)
send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
call = lambda i, s: ('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"run_shell_sandbox","arguments":{"script":"%s"}}}' % (i, s)).encode()
t0 = time.time()
send(call(A, "sleep 3; echo first-A"))
time.sleep(0.3)
send(call(B, "echo second-B"))
for t, l in lines(15):
    print(t, l[:300].decode("utf-8", "backslashreplace"))
p.stdin.close(); print("exit", p.wait(20))
