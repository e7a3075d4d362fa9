#!/bin/sh
# atk42: removes the scratch (no users, containers or images were made).
rm -rf /tmp/atk42
