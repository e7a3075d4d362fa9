# hostile arguments -> do serve's own lines still verify?
import subprocess, os, json, time
A="/tmp/atk33x/fuzz-audit.jsonl"
if os.path.exists(A): os.remove(A)
subprocess.run("sed 's#^path = .*audit.jsonl.*#path = \"%s\"#' /tmp/atk33x/pol.toml > /tmp/atk33x/polfuzz.toml" % A, shell=True)
env=dict(os.environ, HOME="/tmp/atk33/home", XDG_STATE_HOME="/tmp/atk33/home/.local/state", MY_API_KEY="s3cr3tvalue99")
p=subprocess.Popen(["/tmp/atk33/mcpsandbox","serve","--policy","/tmp/atk33x/polfuzz.toml"],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open("/tmp/atk33x/fuzz.log","wb"),env=env)
def send(b): p.stdin.write(b+b"\n"); p.stdin.flush()
def recv(): return p.stdout.readline()
send(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}'); recv()
send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
args = [
 b'{"command":"ls","args":["<>&\xe2\x80\xa8\\u2028\\u0000\\ud800x"]}',
 b'{"command":"ls","args":["\xff\xfe\xc0\xaf"]}',
 b'{"command":"ls","args":[1e999]}',
 b'{"command":"ls","args":["a"],"x":-0,"y":1.0,"z":1E2,"w":12345678901234567890123456789}',
 b'{"command":"ls","args":["a"],"args":["b"]}',
 b'{"command":"ls","args":["s3cr3tvalue99","s3cr\\u0033tvalue99"]}',
 b'{"command":"ls" , "args" : [ "sp" ] , "k\\u0000":"\\/"}',
 b'{"command":"ls","args":["\\"}{\\n"],"\\ud83d\\ude00":"\xf0\x9f\x98\x80"}',
 b'{"command":"l\\u0073","args":[]}',
 b'{"command":"ls","args":["' + b"\\u00e9"*6000 + b'"]}',
 b'{"command":"ls","args":["' + "é".encode()*9000 + b'"]}',
]
for i,a in enumerate(args):
    for tool in [b"run_allowed_command", b"no_such\\u0000tool\xff"]:
        send(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}' % (100+i, tool, a))
        print(i, tool[:8], recv()[:150])
p.stdin.close(); p.wait()
print(subprocess.run(["/tmp/atk33/mcpsandbox","audit","verify",A],capture_output=True,text=True))
print("secret in log:", open(A,"rb").read().count(b"s3cr3tvalue99"))
