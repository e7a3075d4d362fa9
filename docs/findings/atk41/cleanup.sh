#!/bin/sh
# atk41: removes what setup.sh and the scripts made (no users, containers or images were made).
rm -rf /tmp/atk41/ll /tmp/atk41/d /tmp/atk41/src /tmp/atk41/py /tmp/atk41/isp /tmp/atk41/hl /tmp/atk41/audit
