import sys, json
sys.path.insert(0,"/tmp/atk29x")
from stdio import *
s=Stdio("pol.toml")
raws=['{"command":"cat","args":["sa"],"args":["sb"]}',
      '{"command":"cat","args":["sa"],"arg\\u017f":["sb"]}',
      '{"command":"cat","arg\\u017f":["sb"]}',
      '{"comman\\u0064":"cat","args":["sb"]}',
      '{"command":"cat","args":["sb"],"ARGS":["sa"]}',
      '{"command":"ls","command":"cat","args":["sa"]}',
      '{"command":"cat","args":["sa"],"args":null}',
      '{"\\u0063ommand":"cat","args":["sa"],"command":"ls"}',
      '{"command":"cat","args":["sa"],"args\\u0000":["sb"]}',
      '{"command":"cat","args":["sa"],"a\\u0072gs":["sb"]}',
      ]
for raw in raws:
    line='{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_allowed_command","arguments":%s}}'
    s.n+=1; i=s.n
    s.p.stdin.write((line%(i,raw)+"\n").encode()); s.p.stdin.flush()
    r=s.wait(i)
    c=r.get("result",{})
    print(raw, "=>", repr((c.get("structuredContent") or {}).get("stdout")), c.get("content",[{}])[0].get("text","")[:150].replace("\n"," "))
