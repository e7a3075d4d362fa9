#!/bin/bash
# strip ANSI from a pty log
sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1b[78]//g' "$1" | tr -d '\r' | grep -v '^\s*$'
