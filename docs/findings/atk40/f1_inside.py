# runs INSIDE the allowlist sandbox, python3 the only pinned binary (policy /tmp/atk40/py.toml)
import os, subprocess
LD = '/lib64/ld-linux-x86-64.so.2'
open('payload', 'w').write('#!/bin/sh\necho PLANTED-SCRIPT-RAN-$(echo via sh builtins)\n'); os.chmod('payload', 0o755)
def run(tag, argv, **kw):
    try:
        r = subprocess.run(argv, capture_output=True, timeout=5, **kw)
        print(f'{tag}: rc={r.returncode} out={r.stdout.decode()[:200]!r} err={r.stderr.decode()[:160]!r}')
    except Exception as e: print(f'{tag}: failed {e}')
print('--- the harness scenario planted-binary-exec (its three tries):')
run('./payload', ['./payload'])
run('/bin/sh ./payload', ['/bin/sh', './payload'])
print('--- through the ELF interpreter (executable by the Landlock rule):')
run('ld.so /bin/sh ./payload', [LD, '/bin/sh', './payload'])
run('ld.so /usr/bin/wc /etc/hostname', [LD, '/usr/bin/wc', '-c', '/etc/hostname'])
run('ld.so --preload libmemusage.so /usr/bin/wc', [LD, '--preload', '/usr/lib/x86_64-linux-gnu/libmemusage.so', '/usr/bin/wc', '-c', 'payload'])
run('ld.so /usr/bin/perl -e', [LD, '/usr/bin/perl', '-e', 'print "perl ran\\n"'])
print('--- from a memfd (any ELF bytes, no file on disk):')
elf = open('/usr/bin/uname', 'rb').read()
fd = os.memfd_create('x', 0); os.write(fd, elf)
run('memfd uname -a via /proc/self/fd', [f'/proc/self/fd/{fd}', '-a'], pass_fds=(fd,))
