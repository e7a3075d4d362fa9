import sys, json
sys.path.insert(0,"/tmp/atk29x")
from stdio import *
s=Stdio("pol.toml")
cases=[]
R="run_allowed_command"
for a in [None, [], "x", 1, {"command":None}, {"command":1}, {"command":"ls","args":None}, {"command":"ls","args":"-l"},
          {"command":"ls","args":[1,2]}, {"command":"ls","args":[None]}, {"command":"ls","args":[{"a":1}]}, {"command":"ls","args":["\u0000"]},
          {"command":"ls","args":["a\u0000b"]}, {"command":"ls","args":["\ud800"]}, {"command":"ls","args":[""]}, {"command":"ls","args":["-"]},
          {"command":"ls","args":["--"]}, {"command":"ls","args":["-"+"l"*100000]}, {"command":"cat","args":["/"*100000]},
          {"command":"cat","args":["a/"*30000]}, {"command":"cat","args":["../"*1000]}, {"command":"ls","extra":1},
          {"command":"LS"}, {"command":"ls ", "args":[]}, {"Command":"ls"}, {"command":"ls","args":[],"timeout":-1},
          {"command":"ls","args":["--color=always","--format=x"]}, {"command":"head","args":["-c","-1"]},
          {"command":"ls","args":["x"*5000]}, {"command":"ls","args":["é"*3000]}, {"command":"ls","args":["a"]*20000}]:
    cases.append((R,a))
for a in [None, {}, {"path":None}, {"path":""}, {"path":"."}, {"path":"/"}, {"path":"/tmp/atk29x/ws"}, {"path":"/tmp/atk29x/ws/"},
          {"path":"a","content":"x","content_base64":"eA=="}, {"path":"a","content_base64":"!!!"}, {"path":"a"}, {"path":"a","content":None},
          {"path":"a\u0000b","content":"x"}, {"path":"x/"*2000+"f","content":"x"}, {"path":"d/","content":"x"}, {"path":"./","content":"x"},
          {"path":"..","content":"x"}, {"path":"a/../b","content":"x"}, {"path":"a/./b","content":"x"}, {"path":"//b","content":"x"},
          {"path":"n"*300,"content":"x"}, {"path":"big","content_base64":"A"*(5*1024*1024)}, {"path":"many","content":1}]:
    cases.append(("write_file",a))
for a in [None, {}, {"path":None}, {"path":""}, {"path":"."}, {"path":"a","max_bytes":-1}, {"path":"a","max_bytes":0},
          {"path":"a","max_bytes":1e30}, {"path":"a","max_bytes":"1"}, {"path":"a","max_bytes":1.5}, {"path":"a","max_bytes":2**63},
          {"path":"/proc/self/environ"}, {"path":"../../etc/passwd"}]:
    cases.append(("read_file",a))
for a in [None, {}, {"path":None}, {"path":""}, {"path":"/"}, {"path":"a"}, {"path":".."}, {"path":1}]:
    cases.append(("list_files",a))
for tool,a in cases:
    p={"name":tool}
    if a is not None: p["arguments"]=a
    r=s.req("tools/call",p,timeout=60)
    txt=json.dumps(r)
    if r is None: print("NO ANSWER", tool, str(a)[:80]); break
    print(tool, str(a)[:60].encode('unicode_escape').decode(), "=>", txt[:160].replace("\n"," "))
print("alive:", s.p.poll())
# raw junk
for raw in [b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}', b'{"jsonrpc":"2.0","id":{},"method":"ping"}',
            b'{"jsonrpc":"2.0","id":[1],"method":"ping"}', b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
            b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}', b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"read_file","arguments":{"path":"a"},"_meta":{"progressToken":{}}}}',
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}', b'{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"debug"}}',
            b'{"jsonrpc":"2.0","id":8,"method":"completion/complete","params":{}}', b'{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}',
            b'{"jsonrpc":"2.0","id":10,"method":"initialize","params":{}}', b'{"jsonrpc":"2.0","id":11,"result":{}}', b'{"jsonrpc":"2.0","id":12,"error":{"code":1,"message":"x"}}']:
    s.p.stdin.write(raw+b"\n"); s.p.stdin.flush()
time.sleep(1)
r=s.req("ping",{},timeout=10)
print("ping after raw:", r, "alive:", s.p.poll())
