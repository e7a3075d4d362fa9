#!/bin/sh
# atk41 scratch for f16 (run as root): /tmp/atk41/ll/{ws,home}, a policy pinning python3, the mutant-build binary
# (tags mutant,testhooks) whose MCPSANDBOX_MUTANT=workspace-layer gives the allowlist's layer-less mode, the mode of a
# host where overlayfs cannot be mounted on the workspace. No users or containers are made.
set -e
mkdir -p /tmp/atk41
[ -x /tmp/atk41/mcpsandbox ] || (cd /work/main && CGO_ENABLED=0 go build -o /tmp/atk41/mcpsandbox ./cmd/mcpsandbox)
[ -x /tmp/atk41/mcpsandbox-mutant ] || (cd /work/main && CGO_ENABLED=0 go build -tags=mutant,testhooks -o /tmp/atk41/mcpsandbox-mutant ./cmd/mcpsandbox)
rm -rf /tmp/atk41/ll && mkdir -p /tmp/atk41/ll/ws/shell /tmp/atk41/ll/home
chmod 755 /tmp/atk41 /tmp/atk41/ll
echo 'echo the user bashrc' > /tmp/atk41/ll/ws/shell/bashrc
ln -s shell/bashrc /tmp/atk41/ll/ws/bashrc            # a link in the dotfiles repository (the chain's middle)
ln -s /tmp/atk41/ll/ws/bashrc /tmp/atk41/ll/home/.bashrc   # ~/.bashrc -> ws/bashrc -> ws/shell/bashrc
chown -R 65534:65534 /tmp/atk41/ll/ws                  # a root serve runs commands as 65534
P=$(readlink -f /usr/bin/python3)
cat > /tmp/atk41/ll/py.toml <<EOT
version = 1
scheme = "allowlist"
name = "sandbox"
[limits]
timeout = "20s"
memory = "1GiB"
[audit]
path = "/tmp/atk41/ll/audit.jsonl"
[allowlist]
workspace = "/tmp/atk41/ll/ws"
network = false
[[allowlist.commands]]
name = "python3"
path = "$P"
sha256 = "$(sha256sum $P | cut -d' ' -f1)"
EOT
chmod 600 /tmp/atk41/ll/py.toml
