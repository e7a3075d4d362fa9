#!/bin/sh
# atk41 F12: names policy.CodeLoadingEnv does not refuse, and whether MS116 (policy.EnvNamesPath) flags a bare
# `python3 x.sh` (x.sh not there yet: a call makes it). Copies HEAD to /tmp/atk41/src, runs the Go program alone.
set -e
rm -rf /tmp/atk41/src && mkdir -p /tmp/atk41/src/cmd/atk41env
git -C /work/main archive HEAD | tar -x -C /tmp/atk41/src
cp "$(dirname "$0")/f12_env_names.go.txt" /tmp/atk41/src/cmd/atk41env/main.go
cd /tmp/atk41/src && go run ./cmd/atk41env
