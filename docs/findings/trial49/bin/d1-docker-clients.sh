#!/bin/bash
# docker scheme through real clients: Claude Code (local scope) and Gemini CLI; session and per-call policies
. /work/notes/trial49/env.sh
P=/tmp/trial49/proj; mkdir -p $P /tmp/trial49/dws; cd $P; git init -q . 2>/dev/null
echo "data 1" > /tmp/trial49/dws/d.txt
echo "== init docker per call, writable workspace, claude-code + gemini"
mcpsandbox init --scheme docker --image mcpsandbox-test:bookworm --docker-workspace /tmp/trial49/dws --docker-workspace-writable \
  --name dcall --policy-out /tmp/trial49/dcall.toml --client claude-code --client gemini --yes 2>&1 | tail -12
echo "== init docker session"
mcpsandbox init --scheme docker --image mcpsandbox-test:bookworm --docker-reuse session \
  --name dsess --policy-out /tmp/trial49/dsess.toml --client claude-code --yes 2>&1 | tail -8
echo "== claude mcp list"; timeout 120 claude mcp list 2>&1 | tail -5
echo "== gemini mcp list"; timeout 120 gemini mcp list 2>&1 | tail -5
