"""atk49b: the same hostile lines as POST bodies to serve --http (one session). argv: URL CASES"""
import sys, json, http.client, urllib.parse
URL, CASES = sys.argv[1:3]
u = urllib.parse.urlparse(URL)
def post(body, sid=None):
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    if sid: h["Mcp-Session-Id"] = sid
    c.request("POST", u.path, body=body, headers=h)
    r = c.getresponse()
    d = r.read()
    return r.status, r.getheader("Mcp-Session-Id"), r.getheader("Content-Type"), d
st, sid, ct, d = post(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}')
print("init", st, sid is not None)
print(post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', sid)[0])
for l in open(CASES, "rb"):
    l = l.rstrip(b"\n")
    if not l or l.startswith(b"#"): continue
    try:
        st, _, ct, d = post(l, sid)
    except Exception as e:
        st, ct, d = "EXC", "", repr(e).encode()
    print("> %s" % l[:200].decode("utf-8", "backslashreplace"))
    print("   %s %s %s" % (st, ct, d[:400].decode("utf-8", "backslashreplace").replace("\n", "\\n")))
