#!/bin/sh
# atk40 scratch: binary, workspace and policies under /tmp/atk40b (run as root). No users, containers or images are made
# unless a script says so (and its own cleanup removes them).
set -e
mkdir -p /tmp/atk40b/ws /tmp/atk40b/home
chmod 755 /tmp/atk40b
chown 65534:65534 /tmp/atk40b/ws   # a root serve runs commands as 65534: the workspace must be theirs to write
cd /work/main
[ -x /tmp/atk40b/mcpsandbox ] || CGO_ENABLED=0 go build -o /tmp/atk40b/mcpsandbox ./cmd/mcpsandbox
P=$(readlink -f /usr/bin/python3)
cat > /tmp/atk40b/py.toml <<EOT
version = 1
scheme = "allowlist"
name = "sandbox"
[limits]
timeout = "20s"
memory = "1GiB"
[audit]
path = "/tmp/atk40b/audit.jsonl"
[allowlist]
workspace = "/tmp/atk40b/ws"
network = false
[[allowlist.commands]]
name = "python3"
path = "$P"
sha256 = "$(sha256sum $P | cut -d' ' -f1)"
EOT
chmod 600 /tmp/atk40b/py.toml
# wc.toml: the same policy pinning only wc (no interpreter): f4b, f4c, f6b, f11, f11b use it
W=$(readlink -f /usr/bin/wc)
sed -n '1,/^\[\[allowlist.commands\]\]/p' /tmp/atk40b/py.toml | sed '$d' > /tmp/atk40b/wc.toml
printf '[[allowlist.commands]]\nname = "wc"\npath = "%s"\nsha256 = "%s"\n' "$W" "$(sha256sum $W | cut -d' ' -f1)" >> /tmp/atk40b/wc.toml
chmod 600 /tmp/atk40b/wc.toml
