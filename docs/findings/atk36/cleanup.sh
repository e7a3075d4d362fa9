#!/bin/sh
# atk36: remove the round's scratch files (no users, containers or services were made)
rm -rf /tmp/atk36 /tmp/atk36-f1.* /tmp/atk36-f1b.* /tmp/atk36-f4.*
