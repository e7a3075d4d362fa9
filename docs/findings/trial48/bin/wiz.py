#!/root/.pyenv/versions/3.11.7/bin/python3
# Drive `mcpsandbox init` (the wizard) in a real pty. WSTEPS: JSON list of [regex to wait for, text to send];
# answers the terminal's cursor-position queries (ESC[6n) that the survey library makes.
import pexpect, sys, os, json
child = pexpect.spawn('/tmp/trial48/home/bin/mcpsandbox', ['init'] + sys.argv[1:], env=dict(os.environ),
    cwd=os.environ.get('WCWD','/tmp/trial48/proj'), encoding='utf-8', timeout=int(os.environ.get('WTO','90')), dimensions=(50,200))
child.logfile_read = open(os.environ.get('WLOG','/tmp/trial48/wiz.log'), 'w')
CPR = r'\x1b\[6n'
def wait(pat, timeout=-1):
    while True:
        i = child.expect([CPR, pat], timeout=timeout)
        if i == 0: child.send('\x1b[40;1R'); continue
        return
ok = True
for exp, send in json.loads(os.environ.get('WSTEPS','[]')):
    try: wait(exp)
    except pexpect.TIMEOUT: print("TIMEOUT waiting for", repr(exp)); ok=False; break
    except pexpect.EOF: print("EOF waiting for", repr(exp)); ok=False; break
    if send is not None: child.send(send.encode().decode('unicode_escape'))
try: wait(pexpect.EOF, timeout=int(os.environ.get('WEND','5')))
except pexpect.TIMEOUT:
    print("still running at end: ctrl-c"); child.sendcontrol('c')
    try: wait(pexpect.EOF, timeout=15)
    except pexpect.TIMEOUT: print("no exit after ctrl-c: terminating"); child.terminate(force=True)
child.close(); print("exit", child.exitstatus, child.signalstatus)
