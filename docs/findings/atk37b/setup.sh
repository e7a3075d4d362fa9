#!/bin/sh
# atk37b: the binary built once from /work/main HEAD at /tmp/atk37b/mcpsandbox and the small MCP stdio client
# (docs/findings/atk37/stdio.py) at /tmp/atk37b/stdio.py. Sourced by the f*.sh scripts.
mkdir -p /tmp/atk37b && chmod 755 /tmp/atk37b
[ -x /tmp/atk37b/mcpsandbox ] || (cd /work/main && CGO_ENABLED=0 go build -o /tmp/atk37b/mcpsandbox ./cmd/mcpsandbox)
cp /work/main/docs/findings/atk37/stdio.py /tmp/atk37b/stdio.py
