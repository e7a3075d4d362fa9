#!/bin/sh
# atk35: what the scripts expect (run as root): the binary, two users with private groups, a shared group.
set -e
mkdir -p /tmp/atk35 /tmp/atk35x; chmod 755 /tmp/atk35 /tmp/atk35x
[ -x /tmp/atk35/mcpsandbox ] || (cd /work/main && CGO_ENABLED=0 go build -o /tmp/atk35/mcpsandbox ./cmd/mcpsandbox)
cp /tmp/atk35/mcpsandbox /tmp/atk35/mcpsandbox-pub; chmod 755 /tmp/atk35/mcpsandbox-pub
id atkann >/dev/null 2>&1 || useradd -m -U atkann     # uid/gid 1002 on this VM
id atkeve >/dev/null 2>&1 || useradd -m -U atkeve     # 1003
getent group atkshare >/dev/null || { groupadd atkshare; usermod -aG atkshare atkann; usermod -aG atkshare atkeve; }
mkdir -p /home/atkann/cfg/ws; chown -R atkann:atkann /home/atkann/cfg; chmod 755 /home/atkann
