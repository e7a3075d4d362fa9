# stdio: a line refused unread whose scanned id is not valid JSON gets an empty line as its answer
import subprocess, os, json, time
env=dict(os.environ, HOME="/tmp/atk32/home", XDG_STATE_HOME="/tmp/atk32/home/.local/state")
p=subprocess.Popen(["/tmp/atk32/mcpsandbox","serve","--policy","/tmp/atk32x/pol.toml"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk32x/f5.log","wb"),env=env)
def send(s): p.stdin.write(s.encode()+b"\n"); p.stdin.flush()
def recv(): return p.stdout.readline()
send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}'); print(recv()[:80])
send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
tests = [
 '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls",]}},"id":0123}',
 '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls",]}},"id":"\\q"}',
 '{"jsonrpc":"2.0","id":1e400,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls",]}}}',
 '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls",]}}}',
 '{"jsonrpc":"2.0","id":"' + "9"*100000 + '","method":"tools/call","params":{"name":"run_allowed_command" ,]}',
 '{"jsonrpc":"2.0","id":' + "9"*100000 + ',"method":"tools/call","params":{"name":"run_allowed_command" ,]}',
 '{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls"}}}',
 '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls"}},"ID":8}',
]
for t in tests:
    send(t); time.sleep(0.3)
    send('{"jsonrpc":"2.0","id":999,"method":"ping"}')
    got=[]
    while True:
        l=recv(); got.append(l)
        if b'"id":999' in l: break
    print(repr(t[:70]), "->", [g[:160] for g in got[:-1]])
p.stdin.close(); p.wait()
