#!/root/.pyenv/versions/3.11.7/bin/python3
# Drive `mcpsandbox init` in a real pty: answers given as WSTEPS [[regex, text]] are sent when the regex shows up
# (each used once, in order); whenever the screen goes idle 1.2 s with a question pending, Enter (the default) is sent.
# Stops sending Enter at a prompt matching WSTOP (then sends WSTOPSEND if given). Answers ESC[6n cursor queries.
import pexpect, sys, os, json, re, time
child = pexpect.spawn('/tmp/trial48/home/bin/mcpsandbox', ['init'] + sys.argv[1:], env=dict(os.environ),
    cwd=os.environ.get('WCWD','/tmp/trial48/proj'), encoding='utf-8', timeout=1.2, dimensions=(50,200))
child.logfile_read = open(os.environ.get('WLOG','/tmp/trial48/wiz.log'), 'w')
steps = json.loads(os.environ.get('WSTEPS','[]'))
stop = os.environ.get('WSTOP'); stopsend = os.environ.get('WSTOPSEND')
buf = ''; enters = 0; deadline = time.time() + int(os.environ.get('WTO','240'))
ansi = re.compile(r'\x1b\[[0-9;?]*[a-zA-Z]|\x1b[78]')
while time.time() < deadline:
    try:
        i = child.expect([r'\x1b\[6n', pexpect.EOF, pexpect.TIMEOUT])
    except Exception as e: print("err", e); break
    buf += ansi.sub('', child.before or '')
    if i == 0: child.send('\x1b[40;1R'); continue
    if i == 1: break
    # idle
    if steps and re.search(steps[0][0], buf):
        child.send(steps[0][1].encode().decode('unicode_escape')); steps.pop(0); buf = ''; continue
    if stop and re.search(stop, buf):
        if stopsend is None: print("stopped at", stop); break
        child.send(stopsend.encode().decode('unicode_escape')); stop = None; buf=''; continue
    if '? ' in buf and enters < 60:
        child.send('\r'); enters += 1; buf = ''
if child.isalive():
    child.sendcontrol('c')
    try: child.expect(pexpect.EOF, timeout=15)
    except Exception: child.terminate(force=True)
child.close(); print("exit", child.exitstatus, child.signalstatus, "enters", enters)
