import sys,json; sys.path.insert(0,"/work/notes/atk31")
import mcp; mcp.TOKEN="atk31-token-0123456789abcdef"; mcp.PORT=8831
s=mcp.Sess()
call={"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls"}}}
print("batch",s.post(None,raw=json.dumps([call,dict(call,id=6)]).encode()))
print("syntax",s.post(None,raw=b'{"jsonrpc":"2.0","id":7,"method":"tools/call"'))
d="["*20000+"]"*20000
print("deep",str(s.post(None,raw=('{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"ls","args":%s}}}'%d).encode()))[:300])
