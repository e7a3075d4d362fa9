#!/bin/sh
# atk35 F3: init "keeps owner, group and mode" of a client config by st_mode; with a POSIX ACL the
# group bits are the ACL mask, so the rewritten file (and its backup) give the owning group what only
# a named user had. Run as root; users atkann (1002), atkeve (1003), both in group atkshare (groupadd atkshare; usermod -aG atkshare atkann; usermod -aG atkshare atkeve); dev1 (1001) exists here.
B=/tmp/atk35/mcpsandbox-pub; S=/work/notes/atk35/setacl.py; H=/home/atkann
rm -rf $H/.claude.json $H/.claude.json.bak-* $H/.config/mcpsandbox $H/.local/state/mcpsandbox $H/ai-ws
printf '{\n  "mcpServers": {\n    "other": {"command": "true", "env": {"API_KEY": "sk-secret-of-atkann"}}\n  }\n}\n' > $H/.claude.json
chown atkann:atkshare $H/.claude.json; chmod 600 $H/.claude.json
python3 $S $H/.claude.json 1001 4     # setfacl -m u:dev1:r (share with dev1 only); mode shows 0640, group entry ---
ls -l $H/.claude.json
echo "-- before: can atkeve (in the file group atkshare, whose ACL entry is ---) read it?"; runuser -u atkeve -- cat $H/.claude.json >/dev/null 2>&1 && echo yes || echo no
mkdir -p $H/ai-ws; chown atkann:atkann $H/ai-ws
cd $H && runuser -u atkann -- env HOME=$H PATH=/usr/bin:/bin $B init --scheme allowlist --allow wc --workspace $H/ai-ws --client claude-code:user --yes >/tmp/atk35/f3.out 2>&1; echo "init rc=$?"
tail -3 /tmp/atk35/f3.out
ls -l $H/.claude.json $H/.claude.json.bak-* 2>/dev/null
getfattr -n system.posix_acl_access $H/.claude.json 2>/dev/null || python3 -c "import os;print('ACL xattr present:', 'system.posix_acl_access' in os.listxattr('$H/.claude.json'))"
echo "-- after: can atkeve read it?"; runuser -u atkeve -- grep -o 'sk-secret[^\"]*' $H/.claude.json || echo no
for f in $H/.claude.json.bak-*; do [ -e "$f" ] && { echo "-- backup $f readable by atkeve?"; runuser -u atkeve -- grep -o 'sk-secret[^\"]*' "$f" || echo no; }; done
