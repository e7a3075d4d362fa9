#!/bin/sh
# atk38b F4: the audit reserve (fallocate past the log's end, atk32: a call's outcome line has room even when
# the disk fills while it runs) is released by ANY serve that closes the log (trial38 F5's release), and on ext4
# that frees every block past the end, the room other serves sharing the log hold for their running calls too
# (they take it again only at their next append, which is the outcome line itself). Two serves of one user
# share the default log (two clients, two sessions). Serve A starts a call; serve B makes a call and exits;
# the disk fills; A's call ends: its outcome line (with what the call changed) is lost, and the started line
# says "serve died running it". Control: the same without B. Run as root: a 40 MB ext4 loop file system
# (1 KiB blocks, so an outcome line needs a new block) holds the log; the disk filling is simulated by dd on the host (what the reserve exists for).
. /work/notes/atk38b/setup.sh
run() { # $1 = control|attack
  D=/tmp/atk38b/f4-$1; umount $D/lfs 2>/dev/null; rm -rf $D; mkdir -p $D/lfs; pol $D
  truncate -s 40M $D/img; mkfs.ext4 -q -m 0 -b 1024 $D/img; mount -o loop $D/img $D/lfs
  sed -i "s#^path = .*#path = \"$D/lfs/audit.jsonl\"#" $D/pol.toml
  python3 $D/call.py $D/pol.toml "import time; time.sleep(8); print('A done') # $(head -c 12000 /dev/zero | tr '\\0' x)" > $D/a.out 2>&1 & A=$!
  for i in $(seq 100); do [ -s $D/lfs/audit.jsonl ] && break; sleep 0.1; done  # A's started line is written
  if [ $1 = attack ]; then
    python3 $D/call.py $D/pol.toml 'print("B")' > /dev/null 2>&1
    echo "== ($1) serve B made a call and exited"
  fi
  dd if=/dev/zero of=$D/lfs/fill bs=1M 2>/dev/null; dd if=/dev/zero of=$D/lfs/fill2 bs=1k 2>/dev/null; sync
  echo "== ($1) disk filled: $(df -h --output=avail $D/lfs | tail -1) free; log allocated $(du -k $D/lfs/audit.jsonl | cut -f1) KiB for $(stat -c %s $D/lfs/audit.jsonl) bytes"
  wait $A; cat $D/a.out | head -3
  echo "== ($1) the log's decisions: $(python3 -c "import json; print([json.loads(l)['decision']+':'+json.loads(l)['tool'] for l in open('$D/lfs/audit.jsonl')])")"
  rm -f $D/lfs/fill $D/lfs/fill2
  $M audit verify $D/lfs/audit.jsonl 2>&1 | grep -v proven
  umount $D/lfs; rm -f $D/img
}
run control
run attack
