#!/bin/sh
# atk42 scratch for nf_layerless_rename.py (run as root): /tmp/atk42/ll/{ws,home}, a policy pinning python3, the mutant-build binary
# (tags mutant,testhooks) whose MCPSANDBOX_MUTANT=workspace-layer gives the allowlist's layer-less mode.
# Home links: ~/.bashrc -> ws/home/bashrc -> ../shell/bashrc (a chain whose middle is one directory down) and
# ~/.profile -> ws/dot/profile (a regular file one directory down). No users or containers are made.
set -e
mkdir -p /tmp/atk42
[ -x /tmp/atk42/mcpsandbox-mutant ] || (cd /work/main && CGO_ENABLED=0 go build -p 1 -tags=mutant,testhooks -o /tmp/atk42/mcpsandbox-mutant ./cmd/mcpsandbox)
rm -rf /tmp/atk42/ll && mkdir -p /tmp/atk42/ll/ws/shell /tmp/atk42/ll/ws/home /tmp/atk42/ll/ws/dot /tmp/atk42/ll/home
chmod 755 /tmp/atk42 /tmp/atk42/ll
echo 'echo the user bashrc' > /tmp/atk42/ll/ws/shell/bashrc
ln -s ../shell/bashrc /tmp/atk42/ll/ws/home/bashrc
ln -s /tmp/atk42/ll/ws/home/bashrc /tmp/atk42/ll/home/.bashrc
echo 'echo the user profile' > /tmp/atk42/ll/ws/dot/profile
ln -s /tmp/atk42/ll/ws/dot/profile /tmp/atk42/ll/home/.profile
echo 'notes' > /tmp/atk42/ll/ws/notes.md
chown -R 65534:65534 /tmp/atk42/ll/ws
P=$(readlink -f /usr/bin/python3)
cat > /tmp/atk42/ll/py.toml <<EOT
version = 1
scheme = "allowlist"
name = "sandbox"
[limits]
timeout = "20s"
memory = "1GiB"
[audit]
path = "/tmp/atk42/ll/audit.jsonl"
[allowlist]
workspace = "/tmp/atk42/ll/ws"
network = false
[[allowlist.commands]]
name = "python3"
path = "$P"
sha256 = "$(sha256sum $P | cut -d' ' -f1)"
EOT
chmod 600 /tmp/atk42/ll/py.toml
