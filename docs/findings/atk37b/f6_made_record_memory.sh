#!/bin/sh
# atk37b F6: the made record is read whole into a map at EVERY commit (loadMade: up to 64 MiB, never pruned),
# and a call chooses how many entries each of its directories adds: one directory whose 255-byte name holds
# 50 newline-separated tokens adds 50 lines. One call of 20,000 such directories (removed again by the next
# call: the record keeps them) adds ~1 M entries; every later commit of that workspace, by any call,
# then builds a map of them first. Measured: serve's peak RSS (VmHWM) over one trivial write_file, before and
# after. The record grows to 64 MiB (~16 M entries) in ~13 such calls.
# Run as root. Needs bindfs (the workspace keeps no user xattrs, as atk37 F2's fix is for). ~2-3 min.
set -e
. /work/notes/atk37b/setup.sh
D=/tmp/atk37b/f6; [ -d $D/ws ] && { fusermount -u $D/ws 2>/dev/null || true; }; rm -rf $D; mkdir -p $D/real $D/ws
bindfs --xattr-none $D/real $D/ws; WS=$D/ws
chown -R 65534:65534 $D/real
PY3=$(readlink -f /usr/bin/python3)
cat > $D/pol.toml <<P
version = 1
scheme  = "allowlist"
name    = "sandbox"
[limits]
timeout = "300s"
[audit]
path = "$D/audit.jsonl"
[allowlist]
workspace = "$WS"
network   = false
[[allowlist.commands]]
name   = "python3"
path   = "$PY3"
sha256 = "$(sha256sum $PY3 | cut -d' ' -f1)"
P
REC=/var/tmp/mcpsandbox-layers-$(id -u)/made-$(printf %s "$WS" | sha256sum | cut -c1-24)
rm -f $REC
cat > $D/call.py <<'PY'
import sys,time; sys.path.insert(0,'/tmp/atk37b'); from stdio import *
s=Stdio(['/tmp/atk37b/mcpsandbox','serve','--policy',sys.argv[1]])
t=time.time()
if sys.argv[2]=='write':
    r=s.call('write_file',{'path':'note.txt','content':'x'})
else:
    r=s.call('run_allowed_command',{'command':'python3','args':['-c',sys.argv[2]]})
dt=time.time()-t
hwm=[l for l in open('/proc/%d/status'%s.p.pid) if l.startswith('VmHWM')][0].split()[1]
print(text(r)[-160:].replace('\n',' '), '| call %.1fs | serve VmHWM %s kB' % (dt, hwm)); s.close()
PY
echo "== 1. baseline: a trivial write_file:"
python3 $D/call.py $D/pol.toml write
echo "== 2. a call makes 20,000 directories, each named with ~50 newline-separated tokens:"
python3 $D/call.py $D/pol.toml "import os
n=0
for i in range(20000):
    toks=[]
    for j in range(63):
        a='0123456789abcdefghijklmnopqrstuvwxyz'; m=n; t=''
        for k in range(4): t=a[m%36]+t; m//=36
        toks.append(t); n+=1
    os.mkdir(str(i%10)+'_'+'\n'.join(toks)[:250])
print('made')"
echo "== the record: $(wc -c < $REC) bytes, $(wc -l < $REC) lines"
echo "== 3. the next call removes them all (the record keeps them):"
python3 $D/call.py $D/pol.toml "import os,shutil
for e in os.listdir('.'):
    if '\n' in e: os.rmdir(e)
print('removed')"
echo "== 4. the same trivial write_file:"
python3 $D/call.py $D/pol.toml write
fusermount -u $D/ws; rm -rf $D; rm -f $REC
