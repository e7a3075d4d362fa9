import sys, json, subprocess, os
sys.path.insert(0, "/work/notes/atk33")
U="/tmp/atk33x/u1000"
p=subprocess.Popen(["setpriv","--reuid=1000","--regid=1000","--clear-groups","/tmp/atk33/mcpsandbox","serve","--policy",U+"/home/pol.toml"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk33x/nonroot.log","wb"),env={"HOME":U+"/home","PATH":"/usr/bin:/bin"})
def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}); print(p.stdout.readline()[:100])
send({"jsonrpc":"2.0","method":"notifications/initialized"})
send({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls","args":["-la"]}}}); print(p.stdout.readline()[:400])
p.stdin.close(); p.wait()
