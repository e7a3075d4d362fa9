#!/bin/sh
# F5b set-up: a user atk40u (removed by f5b_nonroot_cleanup.sh), its own serve binary copy, workspace and policy.
set -e
id atk40u >/dev/null 2>&1 || useradd -m -d /home/atk40u -s /bin/sh atk40u
H=/home/atk40u
install -o atk40u -g atk40u -m 755 /tmp/atk40/mcpsandbox $H/mcpsandbox
install -d -o atk40u -g atk40u -m 755 $H/ws $H/.config
P=$(readlink -f /usr/bin/python3)
cat > $H/.config/f5b.toml <<EOT
version = 1
scheme = "allowlist"
name = "sandbox"
[limits]
timeout = "20s"
memory = "1GiB"
[audit]
path = "$H/audit.jsonl"
[allowlist]
workspace = "$H/ws"
network = false
[[allowlist.commands]]
name = "python3"
path = "$P"
sha256 = "$(sha256sum $P | cut -d' ' -f1)"
EOT
chown atk40u:atk40u $H/.config/f5b.toml; chmod 600 $H/.config/f5b.toml
cp /work/notes/atk40/stdio.py /tmp/atk40/f5_ino.py $H/ 2>/dev/null || true
chown atk40u:atk40u $H/*.py
