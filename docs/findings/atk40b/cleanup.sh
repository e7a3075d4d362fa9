#!/bin/sh
# atk40b: removes the scratch tree (no users, containers or images were made)
rm -rf /tmp/atk40b
