#!/bin/bash
# usage: insp.sh CONFIG SERVER METHOD [TOOL [--tool-arg k=v ...]]   (serve's stderr to $ERRF if set, else dropped)
. /work/notes/trial48/env.sh
cfg=$1 srv=$2 m=$3; shift 3
if [ "$m" = tools/call ]; then t=$1; shift; set -- --tool-name "$t" "$@"; fi
cd /tmp/trial48/node && timeout 120 npx @modelcontextprotocol/inspector --cli --config "$cfg" --server "$srv" --method "$m" "$@" 2>>${ERRF:-/dev/null}
