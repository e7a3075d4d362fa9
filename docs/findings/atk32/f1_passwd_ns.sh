#!/bin/bash
# F1, as an operator meets it: an account whose home /home/bob is a link (-> /tmp/atk32x/bobreal, as /home/bob -> /data/bob).
# Private mount namespace: a tmpfs on /home holding that link, and a passwd with bob. Root serve, workspace /home/bob/.ssh.
unshare -m --propagation private bash -c '
mount -t tmpfs tmpfs /home && ln -s /tmp/atk32x/bobreal /home/bob
mount --bind /tmp/atk32x/passwd.fake /etc/passwd
for ws in /home/bob/.ssh /home/bob /tmp/atk32x/bobreal/.ssh; do
  sed "s#^workspace = .*#workspace = \"$ws\"#" /tmp/atk32x/pol.toml > /tmp/atk32x/pol-bob.toml
  echo "== $ws: $(HOME=/tmp/atk32/home XDG_STATE_HOME=/tmp/atk32/home/.local/state timeout 10 /tmp/atk32/mcpsandbox serve --policy /tmp/atk32x/pol-bob.toml </dev/null 2>&1 | grep -i "workspace" | head -1 | cut -c1-220)"
done
mkdir -p /tmp/atk32x/bobctl/.ssh; 
'
