#!/bin/sh
# atk35: undo setup.sh and what the scripts left (run as root)
rm -f /run/userdb/atkeve:atkann.membership /run/userdb/atkzed.user; rmdir /run/userdb 2>/dev/null
userdel -r atkann 2>/dev/null; userdel -r atkeve 2>/dev/null; groupdel atkshare 2>/dev/null
rm -rf /srv/atk35 /opt/atk35 /var/tmp/mcpsandbox-layers-1002 /var/tmp/mcpsandbox-layers-1003 /tmp/atk35x
