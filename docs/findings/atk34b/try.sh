#!/bin/sh
# usage: try.sh 'group line to append'  -- appends to /etc/group, shows glibc's view and privgroup's, restores
line="$1"
cp -a /etc/group /tmp/group.try
printf '%s\n' "$line" >> /etc/group
echo "== line: $(printf %s "$line" | od -c | head -2 | tr -s ' ' | head -1)"
id atkeve
/work/notes/atk34b/pgof 1002 1002
cp -a /tmp/group.try /etc/group
