#!/bin/sh
# atk37: what the probes need: the binary built from /work/main's HEAD at /tmp/atk37/mcpsandbox and the small
# MCP stdio client at /tmp/atk37/stdio.py. Sourced by the f*.sh scripts; safe to run twice.
mkdir -p /tmp/atk37 && chmod 755 /tmp/atk37
[ -x /tmp/atk37/mcpsandbox ] || (cd /work/main && CGO_ENABLED=0 go build -o /tmp/atk37/mcpsandbox ./cmd/mcpsandbox)
cp /work/notes/atk37/stdio.py /tmp/atk37/stdio.py
