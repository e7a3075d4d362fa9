#!/bin/sh
# atk39 F6: docker.workspace_writable = false ("the workspace mounted read-only at /workspace"): a file system
# mounted below the workspace stays writable in the container (Docker < 25 binds recursively and makes only
# the top mount read-only; Debian bookworm's docker.io is 20.10). Run as root after setup.sh.
set -u
WS=/tmp/atk39/ws
mkdir -p $WS/data
mount -t tmpfs -o size=1m tmpfs $WS/data && chmod 777 $WS/data   # stands for an NFS/sshfs/USB/bind mount in a project
echo "engine: $(docker version --format '{{.Server.Version}}')"
cat > /tmp/atk39/f6.sh <<'EOS'
grep ' /workspace' /proc/self/mountinfo
echo "planted by the sandbox" > /workspace/data/from-container && echo "write below the workspace: ok"
touch /workspace/top 2>&1
EOS
cd /tmp/atk39 && timeout 60 python3 /tmp/atk39/probe.py /tmp/atk39/probe.toml /tmp/atk39/f6.sh
echo "== on the host:"; ls -l $WS/data; cat $WS/data/from-container
umount $WS/data; rmdir $WS/data
