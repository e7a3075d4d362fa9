#!/usr/bin/env python3
# mcpstdio_call.py TOOL -- CMD ARGS... : start an MCP stdio server, initialize, call TOOL with {}, print the answer
import sys, json, subprocess
i = sys.argv.index('--'); tool = sys.argv[1]; cmd = sys.argv[i+1:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def send(o): p.stdin.write((json.dumps(o)+"\n").encode()); p.stdin.flush()
def recv(n):
    for l in p.stdout:
        m = json.loads(l)
        if m.get('id') == n: return m
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}); recv(1)
send({"jsonrpc":"2.0","method":"notifications/initialized"})
send({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":tool,"arguments":{}}})
print(json.dumps(recv(2))[:600]); p.stdin.close(); p.wait(timeout=20)
