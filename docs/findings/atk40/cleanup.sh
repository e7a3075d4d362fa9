#!/bin/sh
# removes everything atk40's scripts made (scratch under /tmp/atk40 only; no users/containers are left by them)
rm -rf /tmp/atk40
