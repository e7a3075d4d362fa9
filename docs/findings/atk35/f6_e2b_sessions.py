#!/usr/bin/env python3
# atk35 F6: e2b reuse="session" over serve --http: one client's abandoned sessions hold every sandbox
# the E2B account may run at once (fake_e2b.py enforces CAP as E2B documents it); no session of any
# other client gets a sandbox until limits.session_idle / e2b.sandbox_timeout; serve evicts nothing
# (atk34 F1's class, fixed for docker.max_sessions only).  Usage: f6_e2b_sessions.py CAP HOGS
import os, sys, time, subprocess, json
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
CAP, HOGS = int(sys.argv[1]), int(sys.argv[2])
os.environ['PORT'] = '18781'; os.environ['TOK'] = 'atk35-token-0123456789abcdef'
import mcp
X = '/tmp/atk35x/e2b'; os.makedirs(X, exist_ok=True)
open(X + '/tok', 'w').write(os.environ['TOK']); os.chmod(X + '/tok', 0o600)
open('/tmp/atk35x/fake_e2b.log', 'w').close()
fake = subprocess.Popen(['python3', os.path.dirname(os.path.abspath(__file__)) + '/fake_e2b.py', '18780', str(CAP)])
env = dict(os.environ, E2B_API_KEY='e2b_0123456789abcdef0123456789abcdef01234567', E2B_API_URL='http://127.0.0.1:18780',
           E2B_SANDBOX_URL='http://127.0.0.1:18780', HOME='/tmp/atk35x/e2b', XDG_STATE_HOME='/tmp/atk35x/e2b/state')
serve = subprocess.Popen(['/tmp/atk35/mcpsandbox', 'serve', '--policy', '/work/notes/atk35/e2b-session.toml', '--http', '127.0.0.1:18781',
                          '--token-file', X + '/tok'], env=env, stderr=open(X + '/serve.log', 'wb'))
try:
    time.sleep(1.5)
    def text(d):
        r = mcp.res(d); return json.dumps(r)[:400]
    for i in range(HOGS):
        s = mcp.Sess(); st, d = s.call('run_command', {'command': 'echo hog'})
        print('abandoned session %d: one call ->' % i, text(d))
    for t in range(3):
        v = mcp.Sess(); t0 = time.time(); st, d = v.call('run_command', {'command': 'echo victim'})
        print('victim (another client, new session) t+%ds: %.1fs' % (t * 10, time.time() - t0), text(d))
        time.sleep(10)
    print('fake E2B log tail:', open('/tmp/atk35x/fake_e2b.log').read().strip().splitlines()[-2:])
finally:
    serve.terminate(); serve.wait(timeout=30); fake.terminate(); fake.wait(timeout=5)
