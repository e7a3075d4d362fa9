# docker engine on this machine reached by tcp:// -> workspace checked as written; a link to ~/.ssh is mounted
import sys, json
sys.path.insert(0, "/work/notes/atk32")
import stdio
s = stdio.Stdio("/tmp/atk32x/dpol-link.toml", {"DOCKER_HOST": "tcp://127.0.0.1:23750"})
r = s.call("run_shell_sandbox", {"script": "ls -la /workspace; cat /workspace/id_ed25519"})
print(stdio.sc(r).get("stdout"), stdio.sc(r).get("stderr"))
r = s.call("read_file", {"path": "id_ed25519"})
print(json.dumps(stdio.sc(r))[:300])
