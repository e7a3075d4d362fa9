#!/usr/bin/env python3
# atk35: sanity probes with serve running as an unprivileged user (atkann): reads outside, writes outside,
# links out, a FIFO, a setuid file, a protected name, via /usr/bin/python3.11 pinned. Run as root.
import json, subprocess, os, hashlib, base64
H='/home/atkann'; B='/tmp/atk35/mcpsandbox-pub'
os.makedirs(H+'/pr/ws', exist_ok=True)
for p in [H+'/pr', H+'/pr/ws']: os.chown(p,1002,1002); os.chmod(p,0o755)
open('/home/atkeve/secret','w').write('eve-secret\n'); os.chown('/home/atkeve/secret',1003,1003); os.chmod('/home/atkeve/secret',0o644)
sha = hashlib.sha256(open('/usr/bin/python3.11','rb').read()).hexdigest()
pol = f'''version = 1
scheme = "allowlist"
[audit]
path = "{H}/pr/audit.jsonl"
[allowlist]
workspace = "{H}/pr/ws"
[[allowlist.commands]]
name = "python3.11"
path = "/usr/bin/python3.11"
sha256 = "{sha}"
'''
open(H+'/pr/p.toml','w').write(pol); os.chown(H+'/pr/p.toml',1002,1002); os.chmod(H+'/pr/p.toml',0o600)
p = subprocess.Popen(['/usr/sbin/runuser','-u','atkann','--',B,'serve','--policy',H+'/pr/p.toml'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open('/tmp/atk35x/probe.err','wb'), env={'PATH':'/usr/bin:/bin','HOME':H})
def send(o): p.stdin.write((json.dumps(o)+'\n').encode()); p.stdin.flush()
def recv(i):
    for l in p.stdout:
        m = json.loads(l)
        if m.get('id') == i: return m
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}); recv(1)
send({"jsonrpc":"2.0","method":"notifications/initialized"})
code = r'''
import os, stat
r = []
for f in ["/home/atkeve/secret", "/etc/shadow", "/home/atkann/.claude.json", "/home/atkann/pr/audit.jsonl", "/proc/1/environ"]:
    try: open(f).read(); r.append("READ " + f)
    except Exception as e: r.append("no read %s: %s" % (f, type(e).__name__))
for f in ["/home/atkann/outside", "/tmp/atk35x/w", "/var/tmp/w"]:
    try: open(f, "w").write("x"); r.append("WROTE " + f)
    except Exception as e: r.append("no write %s: %s" % (f, type(e).__name__))
os.symlink("/home/atkann/.bashrc", "linkout"); os.symlink("../../.claude.json", "linkup")
try: os.mkfifo("fifo"); r.append("fifo made")
except Exception as e: r.append("mkfifo: %s" % type(e).__name__)
open("suid", "w").write("x"); os.chmod("suid", 0o4755)
os.makedirs(".git/hooks", exist_ok=True); open(".git/hooks/pre-commit", "w").write("#!/bin/sh\nid\n")
os.makedirs("x.git/objects", exist_ok=True); os.makedirs("x.git/refs", exist_ok=True); open("x.git/HEAD","w").write("ref: refs/heads/main\n"); open("x.git/config","w").write("[core]\nfsmonitor = id\n")
print("\n".join(r))
'''
send({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"python3.11","args":["-c",code]}}})
m = recv(2); r = m.get('result', {}); sc = r.get('structuredContent', r)
print(sc.get('stdout', sc)); print('stderr:', str(sc.get('stderr',''))[:300]); print('workspace:', json.dumps(sc.get('workspace', sc.get('workspace_changes')), indent=0)[:1500])
p.stdin.close(); p.wait(timeout=20)
print('workspace now:', sorted(os.listdir(H+'/pr/ws')))
