#!/bin/bash
# follow explain's advice for a wrap policy without [wrap].command: build the hostile server, run verify with it
. /work/notes/trial49/env.sh
cd /tmp/trial49/src && CGO_ENABLED=0 go build -o /tmp/trial49/hs/hostileserver ./internal/harness/hostileserver && echo built
cd /tmp/trial49
MCPSANDBOX_HOSTILE_SERVER=/tmp/trial49/hs/hostileserver timeout 400 mcpsandbox verify --policy /tmp/trial49/w1/py.toml 2>&1 | sed -n '/^3\./,$p' | grep -v '^ *CONTAINED' | tail -25
