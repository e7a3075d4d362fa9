#!/bin/sh
# atk36: what the shell probes need: the binary built from /work/main's HEAD at /tmp/atk36/mcpsandbox
# and the small MCP stdio client at /tmp/atk36/stdio.py. Sourced by f2, f3, f5, f5b; safe to run twice.
HERE=$(dirname "$(readlink -f "$0")")
mkdir -p /tmp/atk36 && chmod 755 /tmp/atk36
[ -x /tmp/atk36/mcpsandbox ] || (cd /work/main && CGO_ENABLED=0 go build -o /tmp/atk36/mcpsandbox ./cmd/mcpsandbox)
cp /work/notes/atk36/stdio.py /tmp/atk36/stdio.py
