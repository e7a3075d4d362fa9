#!/bin/sh
# atk38b F2: a serve that is not root matches a move's two ends by content (gone_linux.go, trial38 F4). A call
# that rewrote a file X the user then deleted mid-call has X written back; before, that always came with
# "written back though gone from the workspace"; now it comes with no word when the call also removed ANY
# workspace file whose bytes equal X's new bytes (a duplicate, an empty file): a root serve (handles) still warns.
set -e
. /work/notes/atk38b/setup.sh
run() { # $1 = control|attack
  D=/tmp/atk38b/f2-$1; rm -rf $D; mkdir -p $D; pol $D; chmod 755 $D
  printf 'the user secret draft\n' > $D/ws/X
  printf 'same\n' > $D/ws/Y          # a file the call may delete (its bytes = what it writes to X)
  chown -R 65534:65534 $D/ws; sed -i "s#^path = .*#path = \"$D/home/audit.jsonl\"#" $D/pol.toml; chmod 644 $D/pol.toml
  CODE='import os,time
open("X","w").write("same\n")
open("started","w").write("1"); time.sleep(4)'
  [ $1 = attack ] && CODE="$CODE
os.remove('Y')"
  CODE="$CODE
print('call done')"
  cat > $D/nr.py <<PY
import sys; sys.path.insert(0,'/tmp/atk38b'); from stdio import *
import os
env=dict(os.environ, HOME='$D/home', XDG_STATE_HOME='$D/home/state', XDG_RUNTIME_DIR='$D/home/run')
s=Stdio(['setpriv','--reuid','65534','--regid','65534','--clear-groups','/tmp/atk38b/mcpsandbox','serve','--policy','$D/pol.toml'],env=env,err='$D/serve.err')
r=s.call('run_allowed_command',{'command':'python3','args':['-c',sys.argv[1]]})
print(text(r)[:1500]); s.close()
PY
  mkdir -p $D/home/run; chmod 700 $D/home/run; chown -R 65534:65534 $D/home
  python3 $D/nr.py "$CODE" > $D/out & P=$!
  sleep 2.5; echo "== ($1) the user deletes X mid-call"; rm -f $D/ws/X
  wait $P; cat $D/out
  echo "== ($1) host after: X=$(cat $D/ws/X 2>&1) Y=$(cat $D/ws/Y 2>&1)"
  echo "== ($1) audit workspace record:"; tail -n1 $D/home/audit.jsonl | python3 -c 'import json,sys; print(json.loads(sys.stdin.read()).get("workspace"))'
}
run control
run attack
