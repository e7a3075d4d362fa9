#!/bin/sh
# removes atk39's scratch (serves are stopped by each script; no users, networks or images were made)
rm -rf /tmp/atk39
