#!/bin/bash
# --token-file: only its mode is checked, not its owner or the directories above it (the policy file and the binary get
# the full ssh-StrictModes walk). Another user who owns the file, or may write a directory above it, chooses the token.
cd /tmp/atk33x
mkdir -p anc/mid tokdir; chmod 0777 anc/mid
echo "tok-0123456789abcdef0123456789ab" > anc/mid/tok; chmod 600 anc/mid/tok
echo "tok-0123456789abcdef0123456789ab" > tokdir/tok; chmod 600 tokdir/tok; chown 1000:1000 tokdir/tok
ls -ld anc/mid anc/mid/tok tokdir/tok
for f in /tmp/atk33x/anc/mid/tok /tmp/atk33x/tokdir/tok; do
  echo "== --token-file $f"
  HOME=/tmp/atk33/home timeout 3 /tmp/atk33/mcpsandbox serve --policy /tmp/atk33x/pol.toml --http 127.0.0.1:8849 --token-file $f 2>&1 | grep -i -E "token|refus" | cut -c1-200
done
echo "== control: the policy file in that directory"; cp /tmp/atk33x/pol.toml anc/mid/p.toml; chmod 600 anc/mid/p.toml
HOME=/tmp/atk33/home timeout 3 /tmp/atk33/mcpsandbox serve --policy /tmp/atk33x/anc/mid/p.toml 2>&1 </dev/null | grep -i refus | cut -c1-200
