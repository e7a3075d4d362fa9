# mutate valid tools/call lines (bytes flipped, cut, duplicated), interleaved with valid calls; serve must stay up, answer, audit intact
import subprocess, os, json, random, time, threading
A="/tmp/atk32x/fuzz2-audit.jsonl"
if os.path.exists(A): os.remove(A)
subprocess.run("sed 's#^path = .*audit.jsonl.*#path = \"%s\"#' /tmp/atk32x/pol.toml > /tmp/atk32x/polfuzz2.toml" % A, shell=True)
env=dict(os.environ, HOME="/tmp/atk32/home", XDG_STATE_HOME="/tmp/atk32/home/.local/state")
p=subprocess.Popen(["/tmp/atk32/mcpsandbox","serve","--policy","/tmp/atk32x/polfuzz2.toml"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk32x/fuzz2.log","wb"),env=env)
out=[]; threading.Thread(target=lambda: [out.append(l) for l in p.stdout], daemon=True).start()
def send(b): p.stdin.write(b+b"\n"); p.stdin.flush()
send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}')
send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
random.seed(32)
base=[b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls","args":["-la"]}}}',
      b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"f.txt","content":"x"}}}',
      b'{"jsonrpc":"2.0","id":%d,"method":"notifications/cancelled","params":{"requestId":%d}}']
for k in range(1500):
    b=random.choice(base)
    l=bytearray(b % ((10000+k,) if b.count(b"%d")==1 else (10000+k, 10000+k-1)))
    for _ in range(random.randint(0,4)):
        if not l: break
        op=random.random(); i=random.randrange(len(l))
        if op<0.4: l[i]=random.choice(b'{}[]",:\\0123456789 \x00\xff')
        elif op<0.6: del l[i:i+random.randint(1,10)]
        elif op<0.8: l[i:i]=l[max(0,i-10):i]
        else: l=l[:i]
    send(bytes(l).replace(b"\n",b" "))
    if k%100==0: send(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls"}}}' % (90000+k))
send(b'{"jsonrpc":"2.0","id":99999,"method":"ping"}')
t=time.time()
while time.time()-t<60 and not any(b'"id":99999' in l for l in out): time.sleep(0.2)
print("ping answered:", any(b'"id":99999' in l for l in out), "lines out:", len(out), "blank lines:", sum(1 for l in out if l.strip()==b""))
p.stdin.close(); p.wait(timeout=60); print("serve rc", p.returncode)
print(subprocess.run(["/tmp/atk32/mcpsandbox","audit","verify",A],capture_output=True,text=True))
print("panics in log:", open("/tmp/atk32x/fuzz2.log","rb").read().count(b"panic"))
