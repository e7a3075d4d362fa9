#!/bin/bash
# F1: init for three clients, two of which already have the entry: only the written one is named
. /work/notes/trial48/bin/fresh.sh f1; mkdir -p $HOME/proj $HOME/ws && cd $HOME/proj && git init -q . && chown 65534:65534 $HOME/ws
set -x
mcpsandbox init --scheme allowlist --allow wc --workspace $HOME/ws --client claude-code --client cursor --yes
mcpsandbox init --scheme allowlist --allow wc --workspace $HOME/ws --client claude-code --client cursor --client windsurf --yes
mcpsandbox init --scheme allowlist --allow wc --workspace $HOME/ws --client claude-code --client cursor --client windsurf --yes
