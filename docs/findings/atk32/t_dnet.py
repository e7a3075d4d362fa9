import sys, json
sys.path.insert(0, "/work/notes/atk32")
import stdio
s = stdio.Stdio(sys.argv[1])
r = s.call("run_shell_sandbox", {"script": "cat /proc/net/dev | cut -c1-12 | tail -n +3; cat /proc/net/tcp | head -5 | cut -c1-60"})
print(json.dumps(stdio.sc(r))[:900])
