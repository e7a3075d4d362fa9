#!/bin/bash
# (run inside: unshare -m --propagation private) a home reached through a bind mount is no home to the workspace rule
mkdir -p /tmp/atk33x/bindhome /tmp/atk33x/fakehome/.ssh
mount --bind /tmp/atk33x/fakehome /tmp/atk33x/bindhome
export H=/tmp/atk33x/fakehome
/work/notes/atk33/wscheck.sh /tmp/atk33x/fakehome/.ssh
/work/notes/atk33/wscheck.sh /tmp/atk33x/bindhome/.ssh
/work/notes/atk33/wscheck.sh /tmp/atk33x/bindhome
umount /tmp/atk33x/bindhome
